#!/bin/bash
# slurm_sweep.sh TRNSIM WORKDIR: a small sweep through a real Slurm on this machine: starts slurmctld and slurmd on
# localhost with a private config (its own ports, state and log directories under WORKDIR; both stopped at the end),
# submits `trnsim sweep --emit slurm`'s job array and collects the rows. It installs nothing and changes nothing
# outside WORKDIR: Slurm comes from `bash scripts/setup.sh test` (slurmctld, slurmd, slurm-client). Where it cannot
# run it prints "SKIP: why" and exits 77 (CTest: skipped, by return code and by SKIP_REGULAR_EXPRESSION).
set -u
trnsim=$1; work=$2
skip() { echo "SKIP: slurm/sweep_job_array: $*"; exit 77; }

for cmd in slurmctld slurmd sbatch squeue sinfo; do
  command -v "$cmd" >/dev/null ||
    skip "Slurm is not installed ($cmd not found; bash scripts/setup.sh test installs slurmctld, slurmd, slurm-client)"
done
[ "$(id -u)" -eq 0 ] || skip "slurmd needs root here (this is uid $(id -u))"

set -e
rm -rf "$work"; mkdir -p "$work"/{state,spool,log}; cd "$work"
host=$(hostname -s)
cpus=$(nproc)
# Ports unlikely to clash with a system Slurm.
cport=$((16800 + RANDOM % 400)); dport=$((cport + 1))
cat > slurm.conf <<CONF
ClusterName=trnsimtest
SlurmctldHost=$host
SlurmctldPort=$cport
SlurmdPort=$dport
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
MpiDefault=none
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=30
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$work/slurm.conf
pids=()
cleanup() {  # daemons that ignore SIGTERM must not hold the test (and the script's own exit status stands)
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 1
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT
slurmctld -D -i -f "$SLURM_CONF" >log/ctld.out 2>&1 & pids+=($!)
slurmd -D -f "$SLURM_CONF" >log/d.out 2>&1 & pids+=($!)
# Every wait has a wall-clock deadline ($SECONDS), not only a count of bounded calls: in the fresh Debian chroot the
# daemons start but sinfo never answers, and 60 tries of `timeout 5 sinfo` outlasted the test's 300 s.
up=0
deadline=$((SECONDS + 40))
while [ $SECONDS -lt $deadline ]; do
  if timeout 3 sinfo -h -o '%T' 2>/dev/null | grep -Eq '^(idle|mixed)'; then up=1; break; fi
  sleep 0.2
done
if [ $up -ne 1 ]; then
  tail -n 20 log/*.log log/*.out; skip "slurmctld / slurmd did not come up in 40 s (no working Slurm here)"
fi
timeout 5 sinfo || true

cat > s.json <<'JSON'
{ "name": "slurm2x2", "set": { "sim.functional": false, "chip.cores": 2 }, "workload": { "m": 256, "k": 256, "n": 256 },
  "axes": [ { "key": "chip.core.te.rows", "values": [64, 128] }, { "key": "workload.dtype", "values": ["bf16", "fp8_e4m3"] } ] }
JSON
"$trnsim" sweep s.json --emit slurm --out s.out --time 00:05:00
# Every Slurm client call is bounded: where the daemons start but do not answer (seen in a chroot without
# systemd), this is an environment without a working Slurm, reported as skipped rather than hanging to the timeout.
job=$(timeout 30 sbatch --parsable s.out/slurm/sweep.sbatch) || { tail -n 20 log/*.log; skip "sbatch got no answer from slurmctld"; }
# Poll (sbatch --wait polls every few seconds; this keeps the test short).
done_ok=0
deadline=$((SECONDS + 120))
while [ $SECONDS -lt $deadline ]; do
  q=$(timeout 10 squeue -h -j "$job" 2>/dev/null) || { tail -n 20 log/*.log; skip "squeue got no answer from slurmctld"; }
  [ -z "$q" ] && { done_ok=1; break; }
  sleep 0.2
done
[ $done_ok -eq 1 ] || { echo "job $job did not finish in 120 s"; tail -n 20 log/*.log; exit 1; }
"$trnsim" sweep --collect --out s.out | tee collect.txt
grep -q "4 points, 4 ok, 0 failed, 0 missing" collect.txt
test "$(ls s.out/logs/slurm-*.log | wc -l)" -eq 4
echo "slurm sweep: ok"
