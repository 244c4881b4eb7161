// Input skew: lane i is delayed by i cycles (lane 0 passes straight through). Used for the moving data (lane = PE
// row) and for the weight groups (lane = PE column), so both reach PE(r, c) on the same r + c wavefront.
module me_skew #(
    parameter int unsigned LANES = 8,
    parameter int unsigned WIDTH = 32
) (
    input  logic                        clk,
    input  logic                        en,
    input  logic [LANES-1:0][WIDTH-1:0] d_i,
    output logic [LANES-1:0][WIDTH-1:0] d_o
);
  assign d_o[0] = d_i[0];
  if (LANES == 1) begin : g_single  // a 1-row or 1-column array: nothing to delay
    logic unused_ok;
    assign unused_ok = &{1'b0, clk, en};
  end
  for (genvar i = 1; i < LANES; i++) begin : g_lane
    logic [i-1:0][WIDTH-1:0] q;  // q[0] is the newest
    always_ff @(posedge clk) begin
      if (en) begin
        q[0] <= d_i[i];
        for (int s = 1; s < i; s++) q[s] <= q[s-1];
      end
    end
    assign d_o[i] = q[i-1];
  end
endmodule
