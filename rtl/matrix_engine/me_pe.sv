// Matrix engine processing element: weight-stationary, double-buffered weight.
//
//  * Moving data x enters from the left (x_i) and leaves to the right one cycle later (x_o). The PE multiplies it
//    by its weight and registers the product: prod = fl32(w * x).
//  * The partial sum enters from above one cycle after its x (ps_i) and leaves downwards one cycle later:
//    ps_o = fl32(ps_i + prod) when the row takes part in the tile (x.active), else ps_i unchanged.
//  * Weights: w_act is used by the tile streaming through; w_bg is the next tile's weight, written in the
//    background (w_wr, from the weight group passing this PE in me_array). The switch travels with the first
//    moving column of a tile (x.first): that column already multiplies by w_bg, and w_act <= w_bg.
//
// The PE is its registers (w_act, w_bg, prod, active_d, ps_o, x_o) and this next-state function: me_array keeps
// each register of all ROWS x COLS PEs in one array and steps the PEs in a loop, so the generated simulator is one
// loop over the mesh whatever its size (a module instance per PE made Verilator emit wiring code for each: 178 MB
// of C++ at 128 x 128). In hardware each array element is one PE's flip-flop and pe_step its logic. x_o is x_i
// registered and active_d its active bit, so they are not computed here.
package me_pe;
  import me_fp::*;

  // The registers after an enabled clock edge (the n_ outputs) from those before it and the PE's inputs.
  function automatic void pe_step(
      input  logic [31:0] w_act, input logic [31:0] w_bg, input logic [31:0] prod, input logic active_d,
      input  logic x_first, input logic [31:0] x_val, input logic [31:0] ps_i, input logic w_wr,
      input  logic [31:0] w_i,
      output logic [31:0] n_w_act, output logic [31:0] n_w_bg, output logic [31:0] n_prod,
      output logic [31:0] n_ps);
    /*verilator no_inline_task*/  // one copy of the PE logic, called for every PE
    n_w_act = x_first ? w_bg : w_act;
    n_w_bg = w_wr ? w_i : w_bg;
    n_prod = fp32_mul(x_first ? w_bg : w_act, x_val);
    n_ps = active_d ? fp32_add(ps_i, prod) : ps_i;
  endfunction

endpackage
