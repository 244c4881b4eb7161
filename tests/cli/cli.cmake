# The command line's subcommand table and option reader (apps/main.cpp, apps/args.cpp): help per command, options a
# mode ignores, values that look like options, and trnsim hbm. Included by tests/CMakeLists.txt after cli_test().
add_test(NAME cli/help_per_command
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/command_line.sh ${TRNSIM} ${CMAKE_CURRENT_BINARY_DIR}/command_line)
set_tests_properties(cli/help_per_command PROPERTIES TIMEOUT 60)
cli_test(help_unknown_command 2 "^trnsim help: unknown command 'fly' \\(trnsim help lists them\\)$" help fly)
cli_test(help_two_commands 2 "^trnsim help: unexpected argument 'train'$" help run train)
cli_test(help_hbm_outstanding 0 "--outstanding N\\|max" help hbm)

# Option values that look like options (`--stats --quiet` used to write a file named --quiet); negative numbers and
# inline values are values.
cli_test(value_is_an_option 2
         "^trnsim collective: option --platform needs a value, got the option '--op' \\(write --platform=--op if that is the value\\)$"
         collective --platform --op allreduce --bytes 1MiB)
cli_test(value_is_a_short_option 2 "^trnsim run: option --m needs a value, got the option '-x'" run --m -x)
cli_test(value_negative_number 2 "^trnsim run: option --m: '-5' is not a non-negative whole number$" run --m -5)
cli_test(value_inline 2 "^trnsim run: option --m: '--5' is not a non-negative whole number$" run --m=--5)

# run: a server / cluster preset (it used to simulate one chip quietly), options of another workload.
cli_test(run_multichip_preset 2
         "^trnsim run: --preset ring-8: a platform of 8 chips; trnsim run simulates one chip: use trnsim collective --platform ring-8 \\(a collective\\) or trnsim train \\(a training step\\)$"
         run --preset ring-8)
cli_test(run_multichip_config 2 "^trnsim run: --config .*torus-4x4.json: a platform of 16 chips; trnsim run simulates one chip"
         run --config ${PROJECT_SOURCE_DIR}/configs/torus-4x4.json)
cli_test(run_no_wall_time_without_stats 2 "^trnsim run: --no-wall-time applies to --stats FILE$" run --no-wall-time)
cli_test(run_program_timeline 2 "^trnsim run: --timeline applies to --workload gemm, not program$"
         run --workload program --program ${PROJECT_SOURCE_DIR}/tests/robustness/programs/copy_roundtrip.json --timeline t.json)
cli_test(run_transformer_vcd 2 "^trnsim run: --vcd applies to --workload gemm, not mlp$" run --workload mlp --vcd w.vcd)

# collective: options the chosen op or mode ignores.
cli_test(collective_root_not_rooted 2 "^trnsim collective: --root applies to broadcast only \\(the rooted collective\\)$"
         collective --platform ring-8 --op allreduce --root 3 --bytes 1MiB)
cli_test(collective_root_broadcast 0 "simulated time +[0-9]+\\.[0-9][0-9][0-9] us$"
         collective --platform ring-8 --op broadcast --root 3 --bytes 64KiB --quiet)
cli_test(collective_max_data_negative 2 "^trnsim collective: --max-data-gib: must be > 0 \\(GiB of real data a run may hold\\)$"
         collective --platform ring-8 --op allreduce --bytes 1MiB --max-data-gib -1)
cli_test(collective_max_data_zero 2 "^trnsim collective: --max-data-gib: must be > 0"
         collective --platform ring-8 --op allreduce --bytes 1MiB --max-data-gib 0)
cli_test(collective_seed_timing_only 2 "^trnsim collective: --seed applies to real data, not --timing-only$"
         collective --platform ring-8 --op allreduce --bytes 1MiB --timing-only --seed 3)
cli_test(collective_max_data_timing_only 2 "^trnsim collective: --max-data-gib applies to real data, not --timing-only$"
         collective --platform ring-8 --op allreduce --bytes 1MiB --timing-only --max-data-gib 8)
cli_test(collective_chunks_above_elements 2
         "^trnsim collective: --chunks 100: the message has only 16 fp32 elements \\(a chunk is at least one\\)$"
         collective --platform ring-8 --op allreduce --bytes 64 --chunks 100)
cli_test(collective_chunks_reported 0 "message +64 bytes fp32, chunks 16, real data"
         collective --platform ring-8 --op allreduce --bytes 64 --chunks 16 --quiet)
# --chip-start: a chip's part of a collective starting late (full chips), and what it cannot be.
cli_test(collective_chip_start 0 "chip start +chip 5 at 2.000 us"
         collective --platform ring-8 --set chips.model=full --op allreduce --bytes 64KiB --chip-start 5:2000 --quiet)
cli_test(collective_chip_start_light 2
         "^trnsim collective: --chip-start holds back the full chips' instruction streams: add --set chips.model=full$"
         collective --platform ring-8 --op allreduce --bytes 64KiB --chip-start 5:2000)
cli_test(collective_chip_start_no_chip 2
         "^trnsim collective: --chip-start: '8:100' names chip 8, the platform has 8, expected CHIP:NS \\(e.g. 3:4000\\)$"
         collective --platform ring-8 --set chips.model=full --op allreduce --bytes 64KiB --chip-start 8:100)
cli_test(collective_chip_start_bad_time 2 "^trnsim collective: --chip-start: '2:-5' has a bad time \\(ns >= 0\\)"
         collective --platform ring-8 --set chips.model=full --op allreduce --bytes 64KiB --chip-start 2:-5)

# sweep: options of another mode.
cli_test(sweep_partition_without_emit 2 "^trnsim sweep: --partition applies to --emit slurm$" sweep x.json --partition p)
cli_test(sweep_jobs_with_emit 2 "^trnsim sweep: --jobs applies to a sweep run here, not --emit slurm$"
         sweep x.json --emit slurm --jobs 2)
cli_test(sweep_point_with_collect 2 "^trnsim sweep: --collect cannot go with --point" sweep --point 0 --collect --out d)
cli_test(sweep_list_with_retry 2 "^trnsim sweep: --retry-failed cannot go with --list" sweep x.json --list --retry-failed)

# trnsim hbm (apps/hbm.cpp over testbench/tools/hbm_trace.cpp): runs, and its bad input.
set(HBM_TRACE ${CMAKE_CURRENT_SOURCE_DIR}/cli/small.trace)
cli_test(hbm_pattern 0 "^requests +2000 \\(1[0-9][0-9][0-9] R, [0-9]+ W\\)$"
         hbm --memspec hbm2e --pattern random --requests 2000 --seed 3 --mix 2:1)
cli_test(hbm_trace 0 "^simulated +[0-9]+\\.[0-9][0-9][0-9] us$" hbm --trace ${HBM_TRACE})
cli_test(hbm_trace_requests_counted 0 "^requests +3 \\(2 R, 1 W\\)$" hbm --trace ${HBM_TRACE})
cli_test(hbm_one_stack 0 "^hbm +HBM3-[0-9]+, 1 stack x 32 pseudo-channels" hbm --requests 100)
cli_test(hbm_outstanding_max 0 "requests +100 " hbm --requests 100 --outstanding max)
cli_test(hbm_outstanding_one 0 "requests +100 " hbm --requests 100 --outstanding 1)
cli_test(hbm_outstanding_zero 2
         "^trnsim hbm: --outstanding: at least 1 request in flight \\(or 'max', the default: pseudo-channels x queue depth\\)$"
         hbm --outstanding 0)
cli_test(hbm_outstanding_word 2 "^trnsim hbm: option --outstanding: 'many' is not a non-negative whole number$"
         hbm --outstanding many)
cli_test(hbm_bad_pattern 2 "^trnsim hbm: --pattern: 'zigzag' is not one of sequential, random, strided$" hbm --pattern zigzag)
cli_test(hbm_unknown_option 2 "^trnsim hbm: unknown option --bogus$" hbm --requests 100 --bogus)
cli_test(hbm_bad_mix 2 "^trnsim hbm: --mix: expected R:W with whole numbers, e.g. 2:1, got '2-1'$" hbm --mix 2-1)
cli_test(hbm_twice 2 "^trnsim hbm: option --requests given twice$" hbm --requests 5 --requests 6)
cli_test(hbm_too_many 2 "^trnsim hbm: --requests: 1000000000 is outside 1 .. 100000000" hbm --requests 1000000000)
cli_test(hbm_positional 2 "^trnsim hbm: unexpected argument 'extra'$" hbm extra)
cli_test(hbm_trace_and_pattern 2 "^trnsim hbm: --pattern cannot go with --trace" hbm --trace ${HBM_TRACE} --pattern random)
cli_test(hbm_trace_requests 2 "^trnsim hbm: --requests applies to --pattern, not --trace$" hbm --trace ${HBM_TRACE} --requests 5)
cli_test(hbm_stride_not_strided 2 "^trnsim hbm: --stride applies to --pattern strided only$" hbm --pattern random --stride 64)
cli_test(hbm_missing_trace 1 "^trnsim hbm: error: /nonexistent.trace: cannot open trace file$" hbm --trace /nonexistent.trace)
cli_test(hbm_trace_directory 1 "^trnsim hbm: error: /tmp: is a directory, not a trace file$" hbm --trace /tmp)
cli_test(hbm_trace_device 1 "^trnsim hbm: error: /dev/zero: not a regular file" hbm --trace /dev/zero)

# Reports: counts with their noun in the singular for one ("1 cores" before), simulated times in us (3 decimals).
cli_test(report_one_core 0 "^  platform +trn2 \\(trn2\\): 1 core, TE 128x128 .* HBM 4 stacks"
         run --set chip.cores=1 --m 64 --k 64 --n 64 --quiet)
cli_test(report_one_block 0 "^  tiling .*accumulators, 1 block$" run --m 64 --k 64 --n 64 --quiet)
cli_test(report_time_in_us 0 "^  simulated time  [0-9]+\\.[0-9][0-9][0-9] us$" run --m 1024 --k 1024 --n 1024 --quiet)
# run --timing-only: sim.functional=false by a flag (as collective's); what contradicts it is refused.
cli_test(run_timing_only_report 0 "result check +none: timing-only run" run --timing-only --m 64 --k 64 --n 64)
cli_test(run_timing_only_vs_set 2 "^trnsim run: --timing-only sets sim.functional=false: drop --set sim.functional=true$"
         run --timing-only --set sim.functional=true)
cli_test(run_timing_only_seed 2 "^trnsim run: --seed applies to real data, not --timing-only$" run --timing-only --seed 3)
