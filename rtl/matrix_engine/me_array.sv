// Matrix engine PE mesh: ROWS x COLS PEs (me_pe). Moving data flows across the columns of each row, partial sums
// flow down each column starting at +0.0 in row 0. Row r receives its moving lane already delayed by r (me_skew).
//
// Weight groups (the LS rows of one weight beat, already delayed by c for column c) descend each column one row per
// cycle through a register per PE position; PE(r, c) takes lane r % LS of group r / LS into its background weight.
// A weight thus reaches PE(r, c) r + c cycles after its beat, on the same wavefront as the moving data, and never
// overtakes the previous tile's switch (rtl/matrix_engine/README.md).
//
// The mesh is written as register arrays and one next-state loop (pe_n, wg_n) rather than a generate block of PE
// instances: the same hardware, but Verilator emits one loop instead of code per PE (me_pe.sv).
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
  import me_pe::*;
  localparam int unsigned WG_W = 1 + JW + LS * 32;

  // The PE registers (me_pe.sv), one array each, [r][c] being PE(r, c).
  logic [31:0]     w_act[ROWS][COLS], w_bg[ROWS][COLS], prod[ROWS][COLS], ps[ROWS][COLS];
  logic            active_d[ROWS][COLS];
  logic [33:0]     x[ROWS][COLS];   // x_o: {first, active, fp32}
  logic [WG_W-1:0] wg[ROWS][COLS];  // weight group register at PE(r, c), passed to row r + 1 (the bottom row's
                                    // feed nothing: synthesis removes them)

  // One clock edge of the mesh. A PE reads its left and upper neighbours' registers as they were before the edge,
  // so the PEs are stepped from the bottom-right corner back to the top-left one: every neighbour is read before
  // it is stepped. The register arrays take blocking assignments because Verilator cannot delay assignments to
  // array elements inside a loop (BLKLOOPINIT); nothing outside this block reads them, and the mesh's output
  // ps_o is an ordinary non-blocking register (a copy of the bottom row's partial sums).
  /* verilator lint_off BLKSEQ */
  always_ff @(posedge clk) begin
    if (en) begin
      logic [COLS-1:0][31:0] bottom;
      for (int r = int'(ROWS) - 1; r >= 0; r--) begin
        for (int c = int'(COLS) - 1; c >= 0; c--) begin
          logic [33:0]     x_in;
          logic [31:0]     ps_in;
          logic [WG_W-1:0] g;
          x_in = c == 0 ? x_i[r] : x[r][c-1];
          ps_in = r == 0 ? 32'd0 : ps[r-1][c];  // +0.0 into row 0
          g = r == 0 ? wg_i[c] : wg[r-1][c];
          pe_step(w_act[r][c], w_bg[r][c], prod[r][c], active_d[r][c], x_in[33], x_in[31:0], ps_in,
                  g[WG_W-1] && g[LS*32 +: JW] == JW'(r / int'(LS)), g[(r % int'(LS))*32 +: 32],
                  w_act[r][c], w_bg[r][c], prod[r][c], ps[r][c]);
          active_d[r][c] = x_in[32];
          x[r][c] = x_in;
          wg[r][c] = g;
          if (r == int'(ROWS) - 1) bottom[c] = ps[r][c];
        end
      end
      ps_o <= bottom;
    end
  end
  /* verilator lint_on BLKSEQ */

endmodule
