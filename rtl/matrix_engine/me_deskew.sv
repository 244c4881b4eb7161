// Output de-skew and output register. Column c of the bottom row is delayed by COLS-1-c cycles so that the COLS
// results of one moving column leave together; NaNs become the canonical quiet NaN and the columns >= m of the
// tile read 0. The control's sideband (valid, last, end, m) arrives aligned with the de-skewed results.
//
// A tile is complete at the end of its moving-port occupancy T = max(N, MIN_II) (docs/tensor_engine.md): when
// N < T the last result is held here until the tile's end token arrives, T - N cycles after it.
module me_deskew #(
    parameter int unsigned COLS = 8,
    parameter int unsigned MW = 4
) (
    input  logic                  clk,
    input  logic                  rst_n,
    input  logic                  en,
    input  logic [COLS-1:0][31:0] ps_i,   // bottom row of the mesh, skewed by column
    input  logic                  sb_valid,
    input  logic                  sb_last,
    input  logic                  sb_end,
    input  logic [MW-1:0]         sb_m,
    output logic                  out_valid,
    output logic                  out_last,
    output logic [COLS-1:0][31:0] out_data
);
  import me_fp::*;

  logic [COLS-1:0][31:0] al;  // aligned results
  for (genvar c = 0; c < COLS; c++) begin : g_col
    localparam int unsigned DEPTH = COLS - 1 - c;
    if (DEPTH == 0) begin : g_direct
      assign al[c] = ps_i[c];
    end else begin : g_delay
      logic [DEPTH-1:0][31:0] q;
      always_ff @(posedge clk) begin
        if (en) begin
          q[0] <= ps_i[c];
          for (int s = 1; s < DEPTH; s++) q[s] <= q[s-1];
        end
      end
      assign al[c] = q[DEPTH-1];
    end
  end

  logic [COLS-1:0][31:0] y;
  always_comb begin
    for (int c = 0; c < COLS; c++) y[c] = (MW'(c) < sb_m) ? canon(al[c]) : 32'd0;
  end

  logic                  hold_pend;
  logic [COLS-1:0][31:0] hold_data;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      out_valid <= 1'b0;
      out_last <= 1'b0;
      hold_pend <= 1'b0;
    end else if (en) begin
      if (sb_valid && sb_last && !sb_end) begin  // last result of a tile with N < T: wait for its end
        hold_data <= y;
        hold_pend <= 1'b1;
        out_valid <= 1'b0;
      end else if (sb_valid) begin
        out_valid <= 1'b1;
        out_last <= sb_last;
        out_data <= y;
      end else if (sb_end) begin
        out_valid <= 1'b1;
        out_last <= 1'b1;
        out_data <= hold_data;
        hold_pend <= 1'b0;
      end else begin
        out_valid <= 1'b0;
      end
    end
  end

`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (rst_n && en && sb_end && !sb_valid) assert (hold_pend) else $error("me_deskew: tile end without a held result");
    if (rst_n && en && sb_end && sb_valid) assert (sb_last) else $error("me_deskew: tile end on a non-last beat");
  end
`endif

endmodule
