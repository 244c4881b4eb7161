// Matrix engine PE mesh: ROWS x COLS PEs. Moving data flows across the columns of each row, partial sums flow down
// each column starting at +0.0 in row 0, weight groups descend each column. Row r receives its moving lane already
// delayed by r (me_skew), column c its weight groups delayed by c, so both meet PE(r, c) on the r + c wavefront.
module me_array #(
    parameter int unsigned ROWS = 8,
    parameter int unsigned COLS = 8,
    parameter int unsigned LS = 4,
    parameter int unsigned JW = 1
) (
    input  logic                      clk,
    input  logic                      en,
    input  logic [ROWS-1:0][33:0]     x_i,    // per row {first, active, fp32}, skewed
    input  logic [COLS-1:0][JW+LS*32:0] wg_i, // per column {valid, index, LS x fp32}, skewed
    output logic [COLS-1:0][31:0]     ps_o    // per column, from the bottom row (skewed)
);

  logic [ROWS-1:0][COLS-1:0][33:0] xh;       // x into PE(r, c)
  logic [ROWS-1:0][COLS-1:0][31:0] psv;      // partial sum into PE(r, c)
  logic [ROWS-1:0][COLS-1:0][JW+LS*32:0] wgv; // weight group into PE(r, c)

  // The moving data leaving the last column and the weight groups leaving the bottom row have reached the edge of
  // the mesh: nothing consumes them (synthesis removes those registers).
  /* verilator lint_off UNUSEDSIGNAL */
  logic [ROWS-1:0][33:0] x_edge;
  logic [COLS-1:0][JW+LS*32:0] wg_edge;
  /* verilator lint_on UNUSEDSIGNAL */

  for (genvar r = 0; r < ROWS; r++) begin : g_row
    for (genvar c = 0; c < COLS; c++) begin : g_col
      if (c == 0) begin : g_xin
        assign xh[r][c] = x_i[r];
      end
      if (r == 0) begin : g_top
        assign psv[r][c] = 32'd0;  // +0.0
        assign wgv[r][c] = wg_i[c];
      end

      logic [33:0] x_out;
      logic [31:0] ps_out;
      logic [JW+LS*32:0] wg_out;

      me_pe #(.ROW(r), .LS(LS), .JW(JW)) u_pe (
          .clk(clk), .en(en),
          .x_i(xh[r][c]), .x_o(x_out),
          .ps_i(psv[r][c]), .ps_o(ps_out),
          .wg_i(wgv[r][c]), .wg_o(wg_out));

      if (c + 1 < COLS) begin : g_xe
        assign xh[r][c+1] = x_out;
      end else begin : g_xl
        assign x_edge[r] = x_out;
      end
      if (r + 1 < ROWS) begin : g_se
        assign psv[r+1][c] = ps_out;
        assign wgv[r+1][c] = wg_out;
      end else begin : g_sl
        assign ps_o[c] = ps_out;
        assign wg_edge[c] = wg_out;
      end
    end
  end

endmodule
