// Matrix engine control: command and tile sequencing (docs/tensor_engine.md, "Timing", with p = 1).
//
//  * Load: a command is accepted together with (or before) its first weight beat when the weight slot is free,
//    i.e. the previous tile has left it by starting its stream (in the same cycle at the earliest). The slot then
//    takes W = ceil(k / LS) beats:       load_start(i) = max(ready(i), load_end(i-1), stream_start(i-1)).
//  * Stream: the loaded tile starts when its weights are complete and the previous tile's moving-port occupancy
//    T = max(n, MIN_II) is over:          stream_start(i) = max(load_end(i), stream_start(i-1) + T(i-1)).
//    Its n moving beats are accepted back to back; the first one carries the weight switch.
//  * Drain: every accepted beat and the end of the occupancy window (the tile's end token) go down a sideband delay
//    line that meets the de-skewed results at the output register, ROWS + COLS + PIPELINE_LATENCY cycles later, so
//    done(i) = stream_start(i) + T(i) + ROWS + COLS + PIPELINE_LATENCY.
// `en` low (output back-pressure) freezes the whole engine.
module me_control import me_pkg::*; #(
    parameter int unsigned ROWS = 8,
    parameter int unsigned COLS = 8,
    parameter int unsigned LS = 4,
    parameter int unsigned MIN_II = 64,
    parameter int unsigned N_MAX = 512,
    localparam int unsigned KW = $clog2(ROWS + 1),
    localparam int unsigned MW = $clog2(COLS + 1),
    localparam int unsigned NW = $clog2(N_MAX + 1),
    localparam int unsigned NG = (ROWS + LS - 1) / LS,
    localparam int unsigned JW = (NG > 1) ? $clog2(NG) : 1
) (
    input  logic          clk,
    input  logic          rst_n,
    input  logic          en,
    // command port
    input  logic          cmd_valid,
    output logic          cmd_ready,
    input  logic [2:0]    cmd_dtype,
    input  logic [KW-1:0] cmd_k,
    input  logic [MW-1:0] cmd_m,
    input  logic [NW-1:0] cmd_n,
    // weight / moving port handshakes
    input  logic          w_valid,
    output logic          w_ready,
    input  logic          m_valid,
    output logic          m_ready,
    // to the input registers
    output logic [2:0]    w_dtype,
    output logic [JW-1:0] w_idx,
    output logic [2:0]    m_dtype,
    output logic [KW-1:0] m_k,
    output logic          m_first,
    // to the output register, aligned with the de-skewed results
    output logic          sb_valid,
    output logic          sb_last,
    output logic          sb_end,
    output logic [MW-1:0] sb_m,
    // tiles accepted and not yet fully output
    input  logic          out_done,
    output logic          idle
);
  localparam int unsigned TW = (NW > $clog2(MIN_II + 1)) ? NW : $clog2(MIN_II + 1);
  localparam int unsigned SB_DEPTH = ROWS + COLS + PIPELINE_LATENCY;
  localparam int unsigned SB_W = 3 + MW;
  localparam int unsigned RW = $clog2(ROWS + LS + 1);  // rows covered by the beats so far (may pass k by < LS)

  // ---- weight slot: the tile being loaded or loaded and waiting to stream
  logic          p_v, p_loaded;
  logic [2:0]    p_dtype;
  logic [KW-1:0] p_k;
  logic [MW-1:0] p_m;
  logic [NW-1:0] p_n;
  logic [RW-1:0] p_rows;
  logic [JW-1:0] p_idx;

  // ---- streaming tile: occupies the moving port for T cycles
  logic          s_v;
  logic [KW-1:0] s_k;
  logic [MW-1:0] s_m;
  logic [NW-1:0] s_n, s_iss;
  logic [TW-1:0] s_cnt, s_tm1;
  logic [2:0]    s_dtype;

  wire loading = p_v && !p_loaded;
  wire start_ok = !s_v && p_v && p_loaded;
  assign m_ready = en && (start_ok || (s_v && s_iss != s_n));
  wire m_acc = m_valid && m_ready;
  wire stream_go = start_ok && m_acc;

  assign cmd_ready = en && (!p_v || stream_go);
  wire cmd_acc = cmd_valid && cmd_ready;
  assign w_ready = en && (loading || cmd_acc);
  wire w_acc = w_valid && w_ready;

  assign w_dtype = loading ? p_dtype : cmd_dtype;
  assign w_idx = loading ? p_idx : '0;

  // The beat accepted this cycle (if any) and the state of its tile.
  wire [NW-1:0] cur_n = stream_go ? p_n : s_n;
  wire [NW-1:0] cur_iss = stream_go ? '0 : s_iss;
  wire [TW-1:0] cur_cnt = stream_go ? '0 : s_cnt;
  wire [TW-1:0] p_tm1 = (TW'(p_n) > TW'(MIN_II) ? TW'(p_n) : TW'(MIN_II)) - TW'(1);
  wire [TW-1:0] cur_tm1 = stream_go ? p_tm1 : s_tm1;
  wire [MW-1:0] cur_m = stream_go ? p_m : s_m;
  wire [NW-1:0] iss_next = cur_iss + NW'(m_acc);
  wire streaming = stream_go || s_v;
  wire beat_last = m_acc && iss_next == cur_n;
  wire tile_end = en && streaming && iss_next == cur_n && cur_cnt >= cur_tm1;

  assign m_dtype = stream_go ? p_dtype : s_dtype;
  assign m_k = stream_go ? p_k : s_k;
  assign m_first = stream_go;

  wire [RW-1:0] rows_base = loading ? p_rows : '0;
  wire [RW-1:0] rows_next = rows_base + RW'(LS);

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      p_v <= 1'b0;
      p_loaded <= 1'b0;
      s_v <= 1'b0;
    end else if (en) begin
      // weight slot
      if (cmd_acc) begin
        p_v <= 1'b1;
        p_dtype <= cmd_dtype;
        p_k <= cmd_k;
        p_m <= cmd_m;
        p_n <= cmd_n;
      end else if (stream_go) begin
        p_v <= 1'b0;
      end
      if (w_acc) begin
        p_rows <= rows_next;
        p_idx <= w_idx + JW'(1);
        p_loaded <= rows_next >= (cmd_acc ? RW'(cmd_k) : RW'(p_k));
      end else if (cmd_acc) begin
        p_rows <= '0;
        p_idx <= '0;
        p_loaded <= 1'b0;
      end
      // streaming tile
      if (stream_go) begin
        s_dtype <= p_dtype;
        s_k <= p_k;
        s_m <= p_m;
        s_n <= p_n;
        s_tm1 <= p_tm1;
      end
      if (streaming) begin
        s_v <= !tile_end;
        s_iss <= iss_next;
        s_cnt <= (cur_cnt >= cur_tm1) ? cur_cnt : cur_cnt + TW'(1);
      end
    end
  end

  // ---- sideband delay line: {valid, last, end, m} of each cycle's beat, to the output register
  logic [SB_DEPTH-1:0][SB_W-1:0] sb;
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      sb <= '0;
    end else if (en) begin
      sb[0] <= {m_acc, beat_last, tile_end, cur_m};
      for (int s = 1; s < SB_DEPTH; s++) sb[s] <= sb[s-1];
    end
  end
  assign {sb_valid, sb_last, sb_end, sb_m} = sb[SB_DEPTH-1];

  // ---- tiles in flight, for idle
  localparam int unsigned CW = $clog2(SB_DEPTH + 8);
  logic [CW-1:0] inflight;
  always_ff @(posedge clk) begin
    if (!rst_n) inflight <= '0;
    else inflight <= inflight + CW'(cmd_acc) - CW'(out_done);
  end
  assign idle = inflight == '0;

endmodule
