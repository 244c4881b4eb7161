// Test wrapper exposing the matrix engine arithmetic (me_fp) combinationally, for tests/cosim/me_fp_test.cpp.
module me_fp_tb (
    input  logic [31:0] a,
    input  logic [31:0] b,
    input  logic [2:0]  dt,
    input  logic [15:0] raw,
    output logic [31:0] mul,
    output logic [31:0] add,
    output logic [31:0] dec
);
  import me_fp::*;
  assign mul = fp32_mul(a, b);
  assign add = fp32_add(a, b);
  assign dec = decode(dt, raw);
endmodule
