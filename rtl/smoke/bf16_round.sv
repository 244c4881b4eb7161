// FP32 -> BF16 with round-to-nearest-even, the rules of models/numerics/dtype.h: overflow rounds to Inf, NaN becomes
// the canonical quiet NaN with its sign kept. A small block that proves the Verilator flow (lint, SystemC model,
// co-simulated check against the C++ numerics) before the matrix engine joins it.
module bf16_round (
    input  logic [31:0] f,
    output logic [15:0] h
);
  logic        is_nan;
  logic        round_bit;
  logic        sticky;
  logic        lsb;
  logic [15:0] rounded;

  assign is_nan    = (f[30:23] == 8'hFF) && (f[22:0] != 23'd0);
  assign lsb       = f[16];
  assign round_bit = f[15];
  assign sticky    = |f[14:0];
  // Round up when above half, or exactly half and the kept LSB is odd; a carry ripples into the exponent
  // (largest finite + half ulp -> Inf, as IEEE RNE requires).
  assign rounded   = f[31:16] + {15'd0, round_bit & (sticky | lsb)};
  assign h         = is_nan ? {f[31], 15'h7FC0} : rounded;
endmodule
