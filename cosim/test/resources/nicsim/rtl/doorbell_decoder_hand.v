// A doorbell decoder written by hand, in plain Verilog-2005, the way a designer outside nicsim
// would write one against docs/blocks.md's port contract for "doorbell": the same ports and
// cycle timing as nicsim's generated DoorbellDecoder, a different inside (the coalescing queue is
// a ring with a head pointer, not a shift register). Parameters default to cx-gen3x16's.
module doorbell_decoder_hand #(
  parameter WINDOW_BASE = 32'h1000,
  parameter WINDOW_SIZE = 33'h1000000,
  parameter PAGE_BITS = 12,
  parameter BF_OFFSET = 13'h800,
  parameter BF_END = 13'h1000,       // BF_OFFSET + 4 registers of 512 bytes
  parameter DEPTH = 16,
  parameter HEAD_BITS = 4,
  parameter IDX_BITS = 14
) (
  input  wire        clk,
  input  wire        reset,
  input  wire        io_mmio_valid,
  input  wire [31:0] io_mmio_payload_offset,
  input  wire [63:0] io_mmio_payload_data,
  input  wire [3:0]  io_mmio_payload_length,
  input  wire        io_tableWrite_valid,
  input  wire [0:0]  io_tableWrite_payload_cq,
  input  wire [23:0] io_tableWrite_payload_qpn,
  input  wire [15:0] io_tableWrite_payload_uar,
  input  wire [0:0]  io_tableWrite_payload_valid,
  output wire        io_doorbell_valid,
  input  wire        io_doorbell_ready,
  output wire [23:0] io_doorbell_payload_qpn,
  output wire [23:0] io_doorbell_payload_index,
  output wire [1:0]  io_doorbell_payload_kind,
  output wire [1:0]  io_doorbell_payload_sn,
  output wire [0:0]  io_doorbell_payload_solicited,
  output reg         io_error_valid,
  output reg  [2:0]  io_error_payload_code,
  output reg  [31:0] io_error_payload_offset,
  output reg  [63:0] io_error_payload_data,
  output reg  [31:0] io_seen,
  output reg  [31:0] io_coalesced,
  output reg  [31:0] io_overflowed,
  output reg  [31:0] io_rejected,
  output wire [4:0]  io_occupancy
);
  localparam C_NONE = 3'd0, C_OUT_OF_WINDOW = 3'd1, C_UNKNOWN_REGISTER = 3'd2, C_BAD_SIZE = 3'd3,
             C_BAD_QUEUE = 3'd4, C_NOT_OWNER = 3'd5, C_OVERFLOW = 3'd6;

  // queue tables: {valid, queue number, owning UAR page}
  reg [40:0] qp_table [0:(1 << IDX_BITS) - 1];
  reg [40:0] cq_table [0:(1 << IDX_BITS) - 1];
  integer t;
  initial for (t = 0; t < (1 << IDX_BITS); t = t + 1) begin qp_table[t] = 41'd0; cq_table[t] = 41'd0; end
  wire [40:0] tw_entry = io_tableWrite_payload_valid[0]
      ? {1'b1, io_tableWrite_payload_qpn, io_tableWrite_payload_uar} : 41'd0;
  wire [IDX_BITS-1:0] tw_index = io_tableWrite_payload_qpn[IDX_BITS-1:0];
  always @(posedge clk) begin
    if (io_tableWrite_valid && !io_tableWrite_payload_cq[0]) qp_table[tw_index] <= tw_entry;
    if (io_tableWrite_valid && io_tableWrite_payload_cq[0]) cq_table[tw_index] <= tw_entry;
  end

  // the write, registered
  reg        w_valid;
  reg [31:0] w_offset;
  reg [63:0] w_data;
  reg [3:0]  w_length;
  always @(posedge clk or posedge reset)
    if (reset) w_valid <= 1'b0; else w_valid <= io_mmio_valid;
  always @(posedge clk)
    if (io_mmio_valid) begin
      w_offset <= io_mmio_payload_offset;
      w_data <= io_mmio_payload_data;
      w_length <= io_mmio_payload_length;
    end

  // decode
  wire [32:0] rel = {1'b0, w_offset} - {1'b0, WINDOW_BASE};
  wire in_window = w_offset >= WINDOW_BASE && rel < WINDOW_SIZE;
  wire [15:0] page = rel[PAGE_BITS + 15:PAGE_BITS];
  wire [PAGE_BITS-1:0] po = rel[PAGE_BITS-1:0];
  wire is_send = {1'b0, po} >= BF_OFFSET && {1'b0, po} < BF_END;
  wire is_arm = po == 12'h20;
  wire [7:0] b0 = w_data[7:0], b1 = w_data[15:8], b2 = w_data[23:16], b3 = w_data[31:24];
  wire [7:0] b4 = w_data[39:32], b5 = w_data[47:40], b6 = w_data[55:48], b7 = w_data[63:56];
  wire [23:0] qpn = is_send ? {b4, b5, b6} : {b5, b6, b7};
  wire [40:0] entry = is_send ? qp_table[qpn[IDX_BITS-1:0]] : cq_table[qpn[IDX_BITS-1:0]];
  wire queue_ok = (is_send || b4 == 8'd0) && entry[40] && entry[39:16] == qpn;
  reg [2:0] code;
  always @* begin
    if (!in_window) code = C_OUT_OF_WINDOW;
    else if (!is_send && !is_arm) code = C_UNKNOWN_REGISTER;
    else if (w_length != 4'd8) code = C_BAD_SIZE;
    else if (!queue_ok) code = C_BAD_QUEUE;
    else if (entry[15:0] != page) code = C_NOT_OWNER;
    else code = C_NONE;
  end
  // a send doorbell's producer: the ctrl segment's index plus its WQE's WQEBBs (DS 0: the index itself)
  wire [6:0] ds_plus = {1'b0, b7[5:0]} + 7'd3;
  wire [15:0] producer = {b1, b2} + {11'd0, ds_plus[6:2]};
  wire [52:0] msg = {qpn, is_send ? {8'd0, producer} : {b1, b2, b3}, is_send ? 2'd0 : 2'd1,
                     is_send ? 2'd0 : b0[5:4], is_send ? 1'b0 : b0[0]};

  // the coalescing queue: a ring; the head offered downstream never merges
  reg [52:0] ring [0:DEPTH-1];
  reg [HEAD_BITS-1:0] head;
  reg [4:0] count;
  assign io_doorbell_valid = count != 5'd0;
  assign {io_doorbell_payload_qpn, io_doorbell_payload_index, io_doorbell_payload_kind, io_doorbell_payload_sn,
          io_doorbell_payload_solicited} = ring[head];
  assign io_occupancy = count;
  wire pop = io_doorbell_valid && io_doorbell_ready;
  wire [4:0] left = count - {4'd0, pop};
  wire [HEAD_BITS-1:0] first = head + {{(HEAD_BITS-1){1'b0}}, pop};
  wire accept = w_valid && code == C_NONE;
  reg hit;
  integer k;
  always @* begin
    hit = 1'b0;
    for (k = 0; k < DEPTH; k = k + 1)
      if ((k != 0 || pop) && k < left && ring[(first + k) % DEPTH][52:29] == msg[52:29]
          && ring[(first + k) % DEPTH][4:3] == msg[4:3])
        hit = 1'b1;
  end
  wire append = accept && !hit && left != DEPTH;
  wire overflow = accept && !hit && left == DEPTH;
  always @(posedge clk) begin
    for (k = 0; k < DEPTH; k = k + 1)
      if (accept && hit && (k != 0 || pop) && k < left && ring[(first + k) % DEPTH][52:29] == msg[52:29]
          && ring[(first + k) % DEPTH][4:3] == msg[4:3])
        ring[(first + k) % DEPTH] <= msg;
    if (append) ring[(first + left) % DEPTH] <= msg;
  end
  always @(posedge clk or posedge reset)
    if (reset) begin
      head <= 0;
      count <= 5'd0;
    end else begin
      head <= first;
      count <= left + {4'd0, append};
    end

  // refusals and drops, the edge after
  always @(posedge clk or posedge reset)
    if (reset) io_error_valid <= 1'b0; else io_error_valid <= w_valid && (code != C_NONE || overflow);
  always @(posedge clk)
    if (w_valid) begin
      io_error_payload_code <= overflow ? C_OVERFLOW : code;
      io_error_payload_offset <= w_offset;
      io_error_payload_data <= w_data;
    end

  // counters
  always @(posedge clk or posedge reset)
    if (reset) begin
      io_seen <= 32'd0;
      io_rejected <= 32'd0;
      io_coalesced <= 32'd0;
      io_overflowed <= 32'd0;
    end else begin
      if (w_valid) io_seen <= io_seen + 32'd1;
      if (w_valid && code != C_NONE) io_rejected <= io_rejected + 32'd1;
      if (accept && hit) io_coalesced <= io_coalesced + 32'd1;
      if (overflow) io_overflowed <= io_overflowed + 32'd1;
    end
endmodule
