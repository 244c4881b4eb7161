// Matrix engine: shared types and constants (docs/tensor_engine.md).
// Mirrors models/tensor_engine/te_config.h and the dtype codes of models/numerics/dtype.h.
package me_pkg;

  // Element formats: the numeric values of enum trnsim::numerics::dtype. The build reads these lines
  // (rtl/CMakeLists.txt): each DT_<NAME> must equal numerics::dtype::<name> (a static_assert in the generated
  // rtl/me_rtl_models.cpp), and DT_COMPUTED is the one list of the formats the RTL computes that the C++ side
  // (trnsim cosim, the transactor, chip.core.te.impl=rtl, the RTL tests) takes. FP32 and TF32 are TLM-only.
  localparam logic [2:0] DT_FP32     = 3'd0;
  localparam logic [2:0] DT_TF32     = 3'd1;
  localparam logic [2:0] DT_BF16     = 3'd2;
  localparam logic [2:0] DT_FP16     = 3'd3;
  localparam logic [2:0] DT_FP8_E4M3 = 3'd4;
  localparam logic [2:0] DT_FP8_E5M2 = 3'd5;
  // A bit per format code: the formats the PE decodes (any other code decodes to +0).
  localparam logic [7:0] DT_COMPUTED = (8'd1 << DT_BF16) | (8'd1 << DT_FP16) | (8'd1 << DT_FP8_E4M3) | (8'd1 << DT_FP8_E5M2);

  // Fixed register latency of the path outside the R x C wavefront, the `pipeline_latency` of the spec:
  // D = ROWS + COLS + PIPELINE_LATENCY. A moving beat accepted in cycle t leaves the output register in cycle
  // t + ROWS + COLS + PIPELINE_LATENCY + 1. The stages are: port register, decode register (me_top), the PE
  // product register (me_pe), the output register (me_deskew); the wavefront itself takes ROWS + COLS - 1.
  localparam int unsigned PIPELINE_LATENCY = 2;

  localparam logic [31:0] CANONICAL_NAN = 32'h7FC0_0000;

endpackage
