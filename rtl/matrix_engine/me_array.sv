// Matrix engine PE mesh: ROWS x COLS PEs. Moving data flows across the columns of each row, partial sums flow down
// each column starting at +0.0 in row 0. Row r receives its moving lane already delayed by r (me_skew).
//
// Weight groups (the LS rows of one weight beat, already delayed by c for column c) descend each column one row per
// cycle through a register per PE position; PE(r, c) takes lane r % LS of group r / LS into its background weight.
// A weight thus reaches PE(r, c) r + c cycles after its beat, on the same wavefront as the moving data, and never
// overtakes the previous tile's switch (rtl/matrix_engine/README.md).
module me_array #(
    parameter int unsigned ROWS = 8,
    parameter int unsigned COLS = 8,
    parameter int unsigned LS = 4,
    parameter int unsigned JW = 1
) (
    input  logic                        clk,
    input  logic                        en,
    input  logic [ROWS-1:0][33:0]       x_i,   // per row {first, active, fp32}, skewed
    input  logic [COLS-1:0][JW+LS*32:0] wg_i,  // per column {valid, group index, LS x fp32}, skewed
    output logic [COLS-1:0][31:0]       ps_o   // per column, from the bottom row (skewed)
);
  localparam int unsigned WG_W = 1 + JW + LS * 32;

  logic [ROWS-1:0][COLS-1:0][33:0]     xh;   // x into PE(r, c)
  logic [ROWS-1:0][COLS-1:0][31:0]     psv;  // partial sum into PE(r, c)
  logic [ROWS-1:0][COLS-1:0][WG_W-1:0] wgv;  // weight group at row r of column c

  // The moving data leaving the last column has reached the edge of the mesh: nothing consumes it (synthesis
  // removes those registers).
  /* verilator lint_off UNUSEDSIGNAL */
  logic [ROWS-1:0][33:0] x_edge;
  /* verilator lint_on UNUSEDSIGNAL */

  for (genvar r = 0; r < ROWS; r++) begin : g_row
    for (genvar c = 0; c < COLS; c++) begin : g_col
      localparam logic [JW-1:0] GROUP = JW'(r / LS);
      localparam int unsigned LANE = r % LS;

      if (c == 0) begin : g_xin
        assign xh[r][c] = x_i[r];
      end
      if (r == 0) begin : g_top
        assign psv[r][c] = 32'd0;  // +0.0
        assign wgv[r][c] = wg_i[c];
      end
      if (r + 1 < ROWS) begin : g_wgq  // the group descends one row per cycle
        logic [WG_W-1:0] q;
        always_ff @(posedge clk) if (en) q <= wgv[r][c];
        assign wgv[r+1][c] = q;
      end

      logic [33:0] x_out;
      logic [31:0] ps_out;
      wire w_wr = wgv[r][c][WG_W-1] && wgv[r][c][LS*32 +: JW] == GROUP;

      me_pe u_pe (
          .clk(clk), .en(en),
          .x_i(xh[r][c]), .x_o(x_out),
          .ps_i(psv[r][c]), .ps_o(ps_out),
          .w_wr(w_wr), .w_i(wgv[r][c][LANE*32 +: 32]));

      if (c + 1 < COLS) begin : g_xe
        assign xh[r][c+1] = x_out;
      end else begin : g_xl
        assign x_edge[r] = x_out;
      end
      if (r + 1 < ROWS) begin : g_se
        assign psv[r+1][c] = ps_out;
      end else begin : g_sl
        assign ps_o[c] = ps_out;
      end
    end
  end

endmodule
