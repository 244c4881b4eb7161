// Matrix engine top: a ROWS x COLS weight-stationary systolic array computing Y[m][n] = S[k][m]^T X[k][n] in FP32
// (docs/tensor_engine.md). All ports are valid/ready.
//   command: {dtype, k, m, n}, 1 <= k <= ROWS, 1 <= m <= COLS, 1 <= n <= N_MAX; dtype BF16, FP16, FP8 E4M3, E5M2.
//   weights: ceil(k / LS_ROWS_PER_CYCLE) beats; beat j lane (q, c) = S[j * LS_ROWS_PER_CYCLE + q][c], raw element.
//   moving:  n beats; beat n lane r = X[r][n], raw element (FP8 in the low byte).
//   output:  n beats; beat n lane c = Y[c][n] (FP32, canonical NaN; lanes >= m read 0), `last` on the n-th.
// out_ready low stalls the whole engine; with out_ready high the timing is exactly the spec's.
module me_top import me_pkg::*; #(
    parameter int unsigned ROWS = 8,
    parameter int unsigned COLS = 8,
    parameter int unsigned LS_ROWS_PER_CYCLE = 4,
    parameter int unsigned MIN_II = 64,
    parameter int unsigned N_MAX = 512,
    localparam int unsigned LS = LS_ROWS_PER_CYCLE,
    localparam int unsigned KW = $clog2(ROWS + 1),
    localparam int unsigned MW = $clog2(COLS + 1),
    localparam int unsigned NW = $clog2(N_MAX + 1)
) (
    input  logic                            clk,
    input  logic                            rst_n,
    input  logic                            cmd_valid,
    output logic                            cmd_ready,
    input  logic [2:0]                      cmd_dtype,
    input  logic [KW-1:0]                   cmd_k,
    input  logic [MW-1:0]                   cmd_m,
    input  logic [NW-1:0]                   cmd_n,
    input  logic                            w_valid,
    output logic                            w_ready,
    input  logic [LS-1:0][COLS-1:0][15:0]   w_data,
    input  logic                            m_valid,
    output logic                            m_ready,
    input  logic [ROWS-1:0][15:0]           m_data,
    output logic                            out_valid,
    input  logic                            out_ready,
    output logic                            out_last,
    output logic [COLS-1:0][31:0]           out_data,
    output logic                            idle
);
  import me_fp::*;

  localparam int unsigned NG = (ROWS + LS - 1) / LS;
  localparam int unsigned JW = (NG > 1) ? $clog2(NG) : 1;
  localparam int unsigned WG_W = 1 + JW + LS * 32;

  // The engine advances unless a result waits for the output port.
  wire en = !(out_valid && !out_ready);

  logic [2:0]    w_dtype, m_dtype;
  logic [JW-1:0] w_idx;
  logic [KW-1:0] m_k;
  logic          m_first;
  logic          sb_valid, sb_last, sb_end;
  logic [MW-1:0] sb_m;

  me_control #(.ROWS(ROWS), .COLS(COLS), .LS(LS), .MIN_II(MIN_II), .N_MAX(N_MAX)) u_ctl (
      .clk(clk), .rst_n(rst_n), .en(en),
      .cmd_valid(cmd_valid), .cmd_ready(cmd_ready), .cmd_dtype(cmd_dtype), .cmd_k(cmd_k), .cmd_m(cmd_m),
      .cmd_n(cmd_n),
      .w_valid(w_valid), .w_ready(w_ready), .m_valid(m_valid), .m_ready(m_ready),
      .w_dtype(w_dtype), .w_idx(w_idx), .m_dtype(m_dtype), .m_k(m_k), .m_first(m_first),
      .sb_valid(sb_valid), .sb_last(sb_last), .sb_end(sb_end), .sb_m(sb_m),
      .out_done(out_valid && out_ready && out_last), .idle(idle));

  // ---- input stage 1: port registers (raw elements)
  logic                          wq_v, mq_v, mq_first;
  logic [2:0]                    wq_dtype, mq_dtype;
  logic [JW-1:0]                 wq_idx;
  logic [KW-1:0]                 mq_k;
  logic [LS-1:0][COLS-1:0][15:0] wq_data;
  logic [ROWS-1:0][15:0]         mq_data;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      wq_v <= 1'b0;
      mq_v <= 1'b0;
    end else if (en) begin
      wq_v <= w_valid && w_ready;
      mq_v <= m_valid && m_ready;
    end
    if (en && w_valid && w_ready) begin
      wq_data <= w_data;
      wq_dtype <= w_dtype;
      wq_idx <= w_idx;
    end
    if (en && m_valid && m_ready) begin
      mq_data <= m_data;
      mq_dtype <= m_dtype;
      mq_k <= m_k;
      mq_first <= m_first;
    end
  end

  // ---- input stage 2: decode registers (FP32), the skew inputs
  logic [COLS-1:0][WG_W-1:0] wd;   // per column {valid, group index, LS x fp32}
  logic [ROWS-1:0][33:0]     md;   // per row {first, active, fp32}

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      for (int c = 0; c < COLS; c++) wd[c][WG_W-1] <= 1'b0;
      for (int r = 0; r < ROWS; r++) md[r][33] <= 1'b0;
    end else if (en) begin
      for (int c = 0; c < COLS; c++) begin
        wd[c][WG_W-1] <= wq_v;
        wd[c][LS*32 +: JW] <= wq_idx;
        for (int q = 0; q < LS; q++) wd[c][q*32 +: 32] <= decode(wq_dtype, wq_data[q][c]);
      end
      for (int r = 0; r < ROWS; r++) begin
        md[r][33] <= mq_v && mq_first;
        md[r][32] <= KW'(r) < mq_k;
        md[r][31:0] <= decode(mq_dtype, mq_data[r]);
      end
    end
  end

  // ---- skews, mesh, de-skew
  logic [ROWS-1:0][33:0]     x_sk;
  logic [COLS-1:0][WG_W-1:0] wg_sk;
  logic [COLS-1:0][31:0]     ps_bot;

  me_skew #(.LANES(ROWS), .WIDTH(34)) u_skew_x (.clk(clk), .en(en), .d_i(md), .d_o(x_sk));
  me_skew #(.LANES(COLS), .WIDTH(WG_W)) u_skew_w (.clk(clk), .en(en), .d_i(wd), .d_o(wg_sk));

  me_array #(.ROWS(ROWS), .COLS(COLS), .LS(LS), .JW(JW)) u_array (
      .clk(clk), .en(en), .x_i(x_sk), .wg_i(wg_sk), .ps_o(ps_bot));

  me_deskew #(.COLS(COLS), .MW(MW)) u_deskew (
      .clk(clk), .rst_n(rst_n), .en(en), .ps_i(ps_bot),
      .sb_valid(sb_valid), .sb_last(sb_last), .sb_end(sb_end), .sb_m(sb_m),
      .out_valid(out_valid), .out_last(out_last), .out_data(out_data));

endmodule
