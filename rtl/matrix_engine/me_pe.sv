// Matrix engine processing element PE(ROW, c): weight-stationary, double-buffered weight.
//
//  * Moving data x enters from the left (x_i) and leaves to the right one cycle later (x_o). The PE multiplies it
//    by its active weight and registers the product: prod = fl32(w * x).
//  * The partial sum enters from above one cycle after its x (ps_i) and leaves downwards one cycle later:
//    ps_o = fl32(ps_i + prod) when the row takes part in the tile (x.active), else ps_i unchanged.
//  * Weights: w_act is used by the tile streaming through; w_bg is the next tile's weight, written in the
//    background. The switch travels with the first moving column of a tile (x.first): that column already
//    multiplies by w_bg, and w_act <= w_bg.
//  * Weight groups (LS rows of one weight beat, already skewed by column) descend the column one row per cycle
//    (wg_i -> wg_o); the PE takes lane ROW % LS of the group whose index is ROW / LS into w_bg. A weight thus
//    reaches PE(r, c) r + c cycles after its beat, on the same wavefront as the moving data, and never
//    overtakes the previous tile's switch (docs: rtl/matrix_engine/README.md).
module me_pe #(
    parameter int unsigned ROW = 0,
    parameter int unsigned LS = 4,     // weight rows per beat
    parameter int unsigned JW = 1      // width of a weight group index
) (
    input  logic               clk,
    input  logic               en,
    // moving data: {first, active, fp32}
    input  logic [33:0]        x_i,
    output logic [33:0]        x_o,
    // partial sums
    input  logic [31:0]        ps_i,
    output logic [31:0]        ps_o,
    // weight groups: {valid, index, LS x fp32}
    input  logic [JW+LS*32:0]  wg_i,
    output logic [JW+LS*32:0]  wg_o
);
  import me_fp::*;

  localparam logic [JW-1:0] MY_GROUP = JW'(ROW / LS);
  localparam int unsigned MY_LANE = ROW % LS;

  logic        x_first, x_active;
  logic [31:0] x_val;
  assign {x_first, x_active, x_val} = x_i;

  logic          wg_valid;
  logic [JW-1:0] wg_idx;
  logic [31:0]   wg_lane;
  assign wg_valid = wg_i[JW+LS*32];
  assign wg_idx = wg_i[LS*32 +: JW];
  assign wg_lane = wg_i[MY_LANE*32 +: 32];

  logic [31:0] w_act, w_bg, prod;
  logic        active_d;
  wire  [31:0] w_use = x_first ? w_bg : w_act;

  always_ff @(posedge clk) begin
    if (en) begin
      if (x_first) w_act <= w_bg;
      if (wg_valid && wg_idx == MY_GROUP) w_bg <= wg_lane;
      prod <= fp32_mul(w_use, x_val);
      active_d <= x_active;
      ps_o <= active_d ? fp32_add(ps_i, prod) : ps_i;
      x_o <= x_i;
      wg_o <= wg_i;
    end
  end

endmodule
