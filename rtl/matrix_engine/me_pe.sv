// Matrix engine processing element: weight-stationary, double-buffered weight.
//
//  * Moving data x enters from the left (x_i) and leaves to the right one cycle later (x_o). The PE multiplies it
//    by its weight and registers the product: prod = fl32(w * x).
//  * The partial sum enters from above one cycle after its x (ps_i) and leaves downwards one cycle later:
//    ps_o = fl32(ps_i + prod) when the row takes part in the tile (x.active), else ps_i unchanged.
//  * Weights: w_act is used by the tile streaming through; w_bg is the next tile's weight, written in the
//    background (w_wr, from the weight group passing this PE in me_array). The switch travels with the first
//    moving column of a tile (x.first): that column already multiplies by w_bg, and w_act <= w_bg.
// All PEs are the same module (no parameters) so that Verilator generates its code once.
module me_pe (
    input  logic        clk,
    input  logic        en,
    // moving data: {first, active, fp32}
    input  logic [33:0] x_i,
    output logic [33:0] x_o,
    // partial sums
    input  logic [31:0] ps_i,
    output logic [31:0] ps_o,
    // background weight write
    input  logic        w_wr,
    input  logic [31:0] w_i
);
  /*verilator no_inline_module*/
  import me_fp::*;

  logic        x_first, x_active;
  logic [31:0] x_val;
  assign {x_first, x_active, x_val} = x_i;

  logic [31:0] w_act, w_bg, prod;
  logic        active_d;
  wire  [31:0] w_use = x_first ? w_bg : w_act;

  always_ff @(posedge clk) begin
    if (en) begin
      if (x_first) w_act <= w_bg;
      if (w_wr) w_bg <= w_i;
      prod <= fp32_mul(w_use, x_val);
      active_d <= x_active;
      ps_o <= active_d ? fp32_add(ps_i, prod) : ps_i;
      x_o <= x_i;
    end
  end

endmodule
