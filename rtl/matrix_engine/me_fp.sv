// Matrix engine arithmetic: operand decode to FP32, FP32 multiply, FP32 add.
// IEEE-754 binary32, round to nearest even, subnormal inputs and outputs kept (no flush to zero).
// Inf * 0 = NaN, Inf - Inf = NaN; every NaN produced here is the canonical quiet NaN 0x7FC00000.
package me_fp;
  import me_pkg::*;

  function automatic logic is_nan(input logic [30:0] a);  // magnitude bits
    return a[30:23] == 8'hFF && a[22:0] != 23'd0;
  endfunction

  function automatic logic [31:0] canon(input logic [31:0] a);
    return is_nan(a[30:0]) ? CANONICAL_NAN : a;
  endfunction

  // Leading zeros of a 48-bit value (48 when zero), as a binary search over a 64-bit left-aligned copy.
  function automatic logic [5:0] lzc48(input logic [47:0] v);
    logic [63:0] x;
    logic [5:0] n;
    x = {v, 16'hFFFF};  // the sentinel ones stop the count at 48
    n = 6'd0;
    if (x[63:32] == 32'd0) begin n = n + 6'd32; x = x << 32; end
    if (x[63:48] == 16'd0) begin n = n + 6'd16; x = x << 16; end
    if (x[63:56] == 8'd0)  begin n = n + 6'd8;  x = x << 8;  end
    if (x[63:60] == 4'd0)  begin n = n + 6'd4;  x = x << 4;  end
    if (x[63:62] == 2'd0)  begin n = n + 6'd2;  x = x << 2;  end
    if (x[63] == 1'b0)     begin n = n + 6'd1; end
    return n;
  endfunction

  // Leading zeros of a 27-bit value (27 when zero).
  function automatic logic [4:0] lzc27(input logic [26:0] v);
    logic [31:0] x;
    logic [4:0] n;
    x = {v, 5'b11111};
    n = 5'd0;
    if (x[31:16] == 16'd0) begin n = n + 5'd16; x = x << 16; end
    if (x[31:24] == 8'd0)  begin n = n + 5'd8;  x = x << 8;  end
    if (x[31:28] == 4'd0)  begin n = n + 5'd4;  x = x << 4;  end
    if (x[31:30] == 2'd0)  begin n = n + 5'd2;  x = x << 2;  end
    if (x[31] == 1'b0)     begin n = n + 5'd1; end
    return n;
  endfunction

  // Narrow formats: the position of the leading one of a small subnormal mantissa.
  function automatic logic [3:0] msb10(input logic [9:0] m);
    logic [3:0] p;
    p = 4'd0;
    for (int i = 0; i < 10; i++) if (m[i]) p = 4'(i);
    return p;
  endfunction

  // ---------------------------------------------------------------------------------------------------------------
  // Decode: every value of BF16, FP16, FP8 E4M3 (OCP fn: no Inf, S.1111.111 = NaN) and FP8 E5M2 is an FP32 value.
  // FP8 elements sit in the low byte of their 16-bit lane. Codes the RTL does not compute (FP32, TF32) decode to 0.
  function automatic logic [31:0] decode(input logic [2:0] dt, input logic [15:0] raw);
    logic s;
    logic [4:0] e5;
    logic [3:0] e4;
    logic [9:0] m10;
    logic [3:0] p;
    logic [9:0] rest;
    logic [31:0] r;
    r = 32'd0;
    if (DT_COMPUTED[dt]) case (dt)
      DT_BF16: r = {raw, 16'd0};
      DT_FP16: begin
        s = raw[15];
        e5 = raw[14:10];
        m10 = raw[9:0];
        if (e5 == 5'd31) r = (m10 == 10'd0) ? {s, 8'hFF, 23'd0} : CANONICAL_NAN;
        else if (e5 != 5'd0) r = {s, 8'(e5) + 8'd112, m10, 13'd0};
        else if (m10 == 10'd0) r = {s, 31'd0};
        else begin  // m * 2^-24, leading one at bit p
          p = msb10(m10);
          rest = m10 & ~(10'd1 << p);
          r = {s, 8'd103 + 8'(p), 23'(rest) << (5'd23 - 5'(p))};
        end
      end
      DT_FP8_E4M3: begin
        s = raw[7];
        e4 = raw[6:3];
        m10 = {7'd0, raw[2:0]};
        if (e4 == 4'd15 && raw[2:0] == 3'd7) r = CANONICAL_NAN;
        else if (e4 != 4'd0) r = {s, 8'(e4) + 8'd120, raw[2:0], 20'd0};
        else if (raw[2:0] == 3'd0) r = {s, 31'd0};
        else begin  // m * 2^-9
          p = msb10(m10);
          rest = m10 & ~(10'd1 << p);
          r = {s, 8'd118 + 8'(p), 23'(rest) << (5'd23 - 5'(p))};
        end
      end
      DT_FP8_E5M2: begin
        s = raw[7];
        e5 = raw[6:2];
        m10 = {8'd0, raw[1:0]};
        if (e5 == 5'd31) r = (raw[1:0] == 2'd0) ? {s, 8'hFF, 23'd0} : CANONICAL_NAN;
        else if (e5 != 5'd0) r = {s, 8'(e5) + 8'd112, raw[1:0], 21'd0};
        else if (raw[1:0] == 2'd0) r = {s, 31'd0};
        else begin  // m * 2^-16
          p = msb10(m10);
          rest = m10 & ~(10'd1 << p);
          r = {s, 8'd111 + 8'(p), 23'(rest) << (5'd23 - 5'(p))};
        end
      end
      DT_FP32, DT_TF32: r = 32'd0;  // TLM-only formats (not in DT_COMPUTED)
      default: r = 32'd0;
    endcase
    return r;
  endfunction

  // ---------------------------------------------------------------------------------------------------------------
  // fl32(a * b)
  function automatic logic [31:0] fp32_mul(input logic [31:0] a, input logic [31:0] b);
    // Not inlined: each PE calls one shared copy. Inlined, Verilator expands the arithmetic into every one of
    // the R x C PE instances (C++ 64x larger at 128x128 than at 16x16; verilating 128x128 ran out of memory).
    /*verilator no_inline_task*/
    logic s;
    logic a_inf, b_inf, a_zero, b_zero;
    logic [23:0] ma, mb;
    logic [47:0] p;
    logic [5:0] lz;
    logic signed [10:0] ea, eb, e, ls;
    logic [46:0] sig;  // significand below the hidden position (bit 47)
    logic [6:0] rs;
    logic sticky, rnd;
    logic [7:0] ef;
    logic [30:0] mag;

    s = a[31] ^ b[31];
    a_inf = a[30:0] == {8'hFF, 23'd0};
    b_inf = b[30:0] == {8'hFF, 23'd0};
    a_zero = a[30:0] == 31'd0;
    b_zero = b[30:0] == 31'd0;
    if (is_nan(a[30:0]) || is_nan(b[30:0]) || (a_inf && b_zero) || (a_zero && b_inf)) return CANONICAL_NAN;
    if (a_inf || b_inf) return {s, 8'hFF, 23'd0};
    if (a_zero || b_zero) return {s, 31'd0};

    ma = {a[30:23] != 8'd0, a[22:0]};
    mb = {b[30:23] != 8'd0, b[22:0]};
    ea = (a[30:23] == 8'd0) ? 11'sd1 : $signed({3'd0, a[30:23]});
    eb = (b[30:23] == 8'd0) ? 11'sd1 : $signed({3'd0, b[30:23]});
    p = 48'(ma) * 48'(mb);                       // value = p * 2^(ea + eb - 300), p != 0
    lz = lzc48(p);
    e = ea + eb - 11'sd126 - $signed({5'd0, lz}); // biased exponent with the leading one at bit 47
    if (e >= 11'sd255) return {s, 8'hFF, 23'd0};

    sticky = 1'b0;
    if (e >= 11'sd1) begin
      sig = 47'(p << lz);
      ef = e[7:0];
    end else begin
      // Subnormal: the significand is p * 2^(ea + eb - 127) with the hidden position (bit 47) empty.
      ef = 8'd0;
      ls = ea + eb - 11'sd127;
      if (ls >= 11'sd0) begin
        sig = 47'(p << ls[5:0]);
      end else begin
        rs = (ls < -11'sd48) ? 7'd48 : 7'(-ls);   // 1..48; the top bit of p >> rs is always 0
        sig = 47'(p >> rs);
        sticky = (p & ((48'd1 << rs) - 48'd1)) != 48'd0;
      end
    end
    sticky = sticky | (sig[22:0] != 23'd0);
    rnd = sig[23] & (sticky | sig[24]);
    mag = {ef, sig[46:24]} + 31'(rnd);           // a carry moves into the exponent (up to Inf)
    return {s, mag};
  endfunction

  // ---------------------------------------------------------------------------------------------------------------
  // fl32(a + b)
  function automatic logic [31:0] fp32_add(input logic [31:0] a, input logic [31:0] b);
    /*verilator no_inline_task*/  // as fp32_mul
    logic a_inf, b_inf;
    logic [31:0] x, y;
    logic sub;
    logic [8:0] ex, ey, d;
    logic [26:0] mx, my, sh;
    logic sticky;
    logic [27:0] sum;
    logic [25:0] n;  // significand below the hidden position (bit 26), with guard, round, sticky
    logic [4:0] lz;
    logic signed [10:0] e;
    logic rnd;
    logic [30:0] mag;

    a_inf = a[30:0] == {8'hFF, 23'd0};
    b_inf = b[30:0] == {8'hFF, 23'd0};
    if (is_nan(a[30:0]) || is_nan(b[30:0]) || (a_inf && b_inf && (a[31] != b[31]))) return CANONICAL_NAN;
    if (a_inf) return a;
    if (b_inf) return b;

    // x has the larger magnitude.
    if (a[30:0] >= b[30:0]) begin
      x = a;
      y = b;
    end else begin
      x = b;
      y = a;
    end
    sub = x[31] ^ y[31];
    ex = (x[30:23] == 8'd0) ? 9'd1 : {1'b0, x[30:23]};
    ey = (y[30:23] == 8'd0) ? 9'd1 : {1'b0, y[30:23]};
    mx = {x[30:23] != 8'd0, x[22:0], 3'b000};     // significand with guard, round, sticky
    my = {y[30:23] != 8'd0, y[22:0], 3'b000};
    d = ex - ey;
    if (d >= 9'd27) begin
      sh = 27'd0;
      sticky = my != 27'd0;
    end else begin
      sh = my >> d;
      sticky = (my & ((27'd1 << d) - 27'd1)) != 27'd0;
    end
    sh[0] = sh[0] | sticky;
    sum = sub ? ({1'b0, mx} - {1'b0, sh}) : ({1'b0, mx} + {1'b0, sh});
    if (sum == 28'd0) return {x[31] & y[31], 31'd0};  // exact zero: +0, except (-0) + (-0)

    if (sum[27]) begin
      n = sum[26:1] | {25'd0, sum[0]};
      e = $signed({2'd0, ex}) + 11'sd1;
    end else begin
      lz = lzc27(sum[26:0]);
      if ($signed({2'd0, ex}) - $signed({6'd0, lz}) >= 11'sd1) begin
        n = 26'(sum[26:0] << lz);
        e = $signed({2'd0, ex}) - $signed({6'd0, lz});
      end else begin
        n = 26'(sum[26:0] << (ex - 9'd1));         // subnormal: exponent field 0
        e = 11'sd0;
      end
    end
    if (e >= 11'sd255) return {x[31], 8'hFF, 23'd0};
    rnd = n[2] & (n[1] | n[0] | n[3]);
    mag = {e[7:0], n[25:3]} + 31'(rnd);
    return {x[31], mag};
  endfunction

endpackage
