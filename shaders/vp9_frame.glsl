// The frame path's data as every kernel of it sees it (src/vp9/frame/): the frame's parsed
// data and its header in one buffer, the frame's pixels, and its three references' pixels.
// The includer sets the workgroup size and includes this first.
//
// Binding 0, the frame's data (src/vp9/frame/records.rs and header.rs): the header's words
// (H_*), then the block records, packed coefficients, end-of-block positions, loop-filter
// levels and masks, where each superblock's records are, the scan orders, the job lists and
// the intra residuals, at the byte or word offsets the header gives. Seen as words, as 16-bit
// coefficients and as bytes.
// Binding 1, the frame being reconstructed (its three planes in one buffer). Bindings 2-4, the
// references last, golden and altref (each bound to the frame's data where there is none).
//
// VP9_HIGH (the `_high` variants of the kernels): 10 and 12 bits, the depth the header's; pixels
// of 16 bits, coefficients of 32 (FFmpeg's at those depths). Otherwise 8 bits.

#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require

// Invocations of a workgroup (the includer's local_size_x).
#ifndef WORKGROUP
#define WORKGROUP 64
#endif

#ifdef VP9_HIGH
#define PIXEL uint16_t
// log2 of a pixel's bytes, of the pixels in a word, and a pixel's bits
#define PIXEL_SHIFT 1u
#define WORD_PIXELS_LOG2 1
#define PIXEL_BITS 16
#else
#define PIXEL uint8_t
#define PIXEL_SHIFT 0u
#define WORD_PIXELS_LOG2 2
#define PIXEL_BITS 8
#endif
#define WORD_PIXELS (1 << WORD_PIXELS_LOG2)

layout(std430, set = 0, binding = 0) buffer Data { uint data[]; };
layout(std430, set = 0, binding = 0) readonly buffer DataCoefs { int16_t data_coefs[]; };
layout(std430, set = 0, binding = 0) buffer DataBytes { uint8_t data_bytes[]; };
layout(std430, set = 0, binding = 1) coherent buffer Cur { PIXEL cur[]; };
layout(std430, set = 0, binding = 2) readonly buffer Ref0 { PIXEL ref0[]; };
layout(std430, set = 0, binding = 3) readonly buffer Ref1 { PIXEL ref1[]; };
layout(std430, set = 0, binding = 4) readonly buffer Ref2 { PIXEL ref2[]; };
// The same, a word (WORD_PIXELS pixels) at a time.
layout(std430, set = 0, binding = 2) readonly buffer Ref0Words { uint ref0_words[]; };
layout(std430, set = 0, binding = 3) readonly buffer Ref1Words { uint ref1_words[]; };
layout(std430, set = 0, binding = 4) readonly buffer Ref2Words { uint ref2_words[]; };

layout(push_constant) uniform Push {
    uint first_job;
    uint job_count;
} pc;

// Header words (src/vp9/frame/header.rs writes them).
const uint H_COLS = 0u;          // 8x8 blocks across, down
const uint H_ROWS = 1u;
const uint H_SB_COLS = 2u;
const uint H_SB_ROWS = 3u;
const uint H_SS_H = 4u;
const uint H_SS_V = 5u;
const uint H_LOSSLESS = 6u;
const uint H_STATUS = 7u;        // what the kernels found: STATUS_*
const uint H_PLANE = 8u;         // 3 x (byte offset in binding 1, stride in bytes)
const uint H_RECORDS = 14u;      // word offset of the records
const uint H_RESIDUALS = 15u;    // 3 x the plane's first intra residual in the residual area
const uint H_EOBS = 18u;         // 3 x byte offset of the plane's end-of-block positions
const uint H_LOOPFILTER = 21u;   // byte offset of the superblocks' levels and masks
const uint H_SB_BLOCKS = 22u;    // word offset of each superblock's records, coefficients (4 words)
const uint H_BIT_DEPTH = 23u;
const uint H_RESIDUAL_AREA = 24u; // index of the intra residuals' first (see residual_at)
const uint H_COEF_STREAM = 25u;  // index of the first packed coefficient (see coef_at)
const uint H_SCANS = 27u;        // word offset of the scan orders (src/vp9/frame/records.rs)
const uint H_REF = 32u;          // 3 x 16 words: see REF_*
const uint H_TAPS = 80u;         // the 8-tap filters: [smooth, regular, sharp][16][8] bytes
const uint H_LIMITS = 176u;      // the loop filter's E (mblim) then I (lim), 64 bytes each
const uint H_TILE_START = 208u;  // per superblock column: its tile's first 8x8 column
// A reference's words: 3 x (byte offset in its binding, stride), luma width and height, the
// Q14 scale and the step of each direction (0: the frame's own size).
const uint REF_WIDTH = 6u;
const uint REF_HEIGHT = 7u;
const uint REF_SCALE = 8u;
const uint REF_STEP = 10u;

// STATUS_*: a transform's 16-bit lanes overflowed (a damaged stream): FFmpeg's SIMD and C may
// differ, the host redoes the frame with FFmpeg's own functions.
const uint STATUS_OVERFLOW = 1u;

uint header(uint word) { return data[word]; }

#ifndef VP9_HIGH
// The intra blocks' residuals at 8 bits, 16 bits each as the coefficients (binding 0 again).
layout(std430, set = 0, binding = 0) buffer DataResiduals { int16_t data_residuals[]; };
#endif

// The frame's depth and the intra residuals' place, read once by each kernel (read_depth)
// before anything uses them: read from the header where they are used, they would be read
// again after every store to the frame or the residuals, the compiler not knowing that those
// do not alias the header.
uint residual_area = 0u;
#ifdef VP9_HIGH
int frame_depth = 10;
void read_depth()
{
    frame_depth = int(header(H_BIT_DEPTH));
    residual_area = header(H_RESIDUAL_AREA);
}
int bit_depth() { return frame_depth; }
// Coefficient `i` of the parsed data: 32-bit words.
int coef_at(uint i) { return int(data[i]); }
// Residual `i` of the residual area (an intra transform block's, computed first).
int residual_at(uint i) { return int(data[residual_area + i]); }
void put_residual(uint i, int v) { data[residual_area + i] = uint(v); }
#else
void read_depth() { residual_area = header(H_RESIDUAL_AREA); }
int bit_depth() { return 8; }
// Coefficient `i` of the parsed data: 16 bits each.
int coef_at(uint i) { return int(data_coefs[i]); }
int residual_at(uint i) { return int(data_residuals[residual_area + i]); }
void put_residual(uint i, int v) { data_residuals[residual_area + i] = int16_t(v); }
#endif
int pixel_max() { return (1 << bit_depth()) - 1; }

// FFmpeg's enum BlockSize and the record's flags (src/vp9/frame/records.rs).
const uint BS_8X8 = 9u;
const uint BLOCK_INTRA = 1u;
const uint BLOCK_COMP = 2u;
const uint BLOCK_SKIP = 4u;
const uint BLOCK_UNPREDICTED = 8u;

// A block record (FFVP9BlockRecord, 13 words).
struct Block {
    int col, row;        // 8x8 blocks
    uint bs, tx, uvtx, flags;
    uint modes;          // mode[0..3], a byte each
    uint uvmode, interp;
    uint ref_a, ref_b;
    uint unit;           // coefficients: 8x8 blocks' worth from the start
    uint mv_at;          // word of mv[0][0]
};

// A record's position, sizes and flags, from its first two words (the rest left zero).
Block block_position(uint w0, uint w1)
{
    Block b;
    b.col = int(w0 & 0xffffu);
    b.row = int(w0 >> 16);
    b.bs = w1 & 0xffu;
    b.tx = (w1 >> 8) & 0xffu;
    b.uvtx = (w1 >> 16) & 0xffu;
    b.flags = w1 >> 24;
    b.modes = 0u;
    b.uvmode = 0u;
    b.interp = 0u;
    b.ref_a = 0u;
    b.ref_b = 0u;
    b.unit = 0u;
    b.mv_at = 0u;
    return b;
}

Block load_block(uint i)
{
    uint at = header(H_RECORDS) + 13u * i;
    uint w3 = data[at + 3u];
    Block b = block_position(data[at], data[at + 1u]);
    b.modes = data[at + 2u];
    b.uvmode = w3 & 0xffu;
    b.interp = (w3 >> 8) & 0xffu;
    b.ref_a = (w3 >> 16) & 0xffu;
    b.ref_b = w3 >> 24;
    b.unit = data[at + 4u];
    b.mv_at = at + 5u;
    return b;
}

uint block_mode(Block b, uint k) { return (b.modes >> (8u * k)) & 0xffu; }

// Vector `k` (4x4 index) of reference `r` (0, 1), in 1/8 pel.
ivec2 block_mv(Block b, uint k, uint r)
{
    uint w = data[b.mv_at + 2u * k + r];
    return ivec2(int(w << 16) >> 16, int(w) >> 16);
}

// FFmpeg's ff_vp9_bwh_tab: width and height in 4x4 blocks ([0]) and 8x8 blocks ([1]).
const uint BWH4[13] = uint[13](0x1010u, 0x0810u, 0x1008u, 0x0808u, 0x0408u, 0x0804u,
                                0x0404u, 0x0204u, 0x0402u, 0x0202u, 0x0102u, 0x0201u, 0x0101u);
// (height << 8 | width), in 4x4 blocks.
uvec2 bw4(uint bs) { return uvec2(BWH4[bs] & 0xffu, BWH4[bs] >> 8); }
uvec2 bw8(uint bs) { return max(bw4(bs) >> 1, uvec2(1u)); }

// A plane's pixels: offset in binding 1 and stride, in pixels (the header has bytes), and its
// decoded size (FFmpeg writes whole 8x8 blocks: cols * 8 by rows * 8 luma pixels, subsampled
// for chroma).
uint plane_offset(uint p) { return header(H_PLANE + 2u * p) >> PIXEL_SHIFT; }
int plane_stride(uint p) { return int(header(H_PLANE + 2u * p + 1u) >> PIXEL_SHIFT); }
uint ss_h(uint p) { return p == 0u ? 0u : header(H_SS_H); }
uint ss_v(uint p) { return p == 0u ? 0u : header(H_SS_V); }
ivec2 plane_size(uint p)
{
    return ivec2(int(header(H_COLS) * 8u >> ss_h(p)), int(header(H_ROWS) * 8u >> ss_v(p)));
}

// A plane's place and size, read once (not again after every store, which may alias them).
struct Plane {
    uint offset;
    int stride;
    ivec2 size;
};

Plane plane_of(uint p) { return Plane(plane_offset(p), plane_stride(p), plane_size(p)); }

uint cur_at(uint p, int x, int y) { return plane_offset(p) + uint(y * plane_stride(p) + x); }

// A frame pixel, written only inside the plane's decoded size.
void put_pixel(uint p, int x, int y, int v)
{
    ivec2 size = plane_size(p);
    if (x < size.x && y < size.y)
        cur[cur_at(p, x, y)] = PIXEL(v);
}

int get_pixel(uint p, int x, int y) { return int(uint(cur[cur_at(p, x, y)])); }

void report(uint status) { atomicOr(data[H_STATUS], status); }
