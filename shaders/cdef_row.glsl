// AV1 CDEF a superblock row at a time (src/kernels/cdef_row.rs is the CPU reference and
// writes the record): what both of its kernels see. The includer sets the workgroup size.
//
// Binding 0, the row's record: header words (R_*), the masks, and the halos (per plane the two
// rows above the strips and the two below, a row of the plane's width each). Binding 1, the
// frame's pixels (8 or 16 bits each). Binding 2, the snapshot (device memory where there is
// some): per plane the strips' rows from two above to two below, which cdef_row_copy.comp
// fills from the frame and the halos before any block of the row is filtered.

#extension GL_EXT_shader_8bit_storage : require

layout(std430, set = 0, binding = 0) readonly buffer Record { uint rec[]; };
layout(std430, set = 0, binding = 0) readonly buffer RecordBytes { uint8_t rec_bytes[]; };
layout(std430, set = 0, binding = 1) buffer Pixels { uint8_t px[]; };
layout(std430, set = 0, binding = 2) buffer Snapshot { uint8_t snap_bytes[]; };

layout(push_constant) uniform Push {
    uint first_job;
    uint job_count;
} pc;

const uint R_BW = 0u;          // the frame in 4x4 blocks across, down
const uint R_BH = 1u;
const uint R_BY_START = 2u;    // the row's strips, in 4x4 block rows
const uint R_STRIPS = 3u;
const uint R_SS_H = 4u;        // chroma subsampling shifts
const uint R_SS_V = 5u;
const uint R_PLANES = 6u;      // 1 or 3
const uint R_BITDEPTH_MIN_8 = 7u;
const uint R_TWO_BYTES = 8u;   // pixels of two bytes
const uint R_DAMPING = 9u;     // the header's, plus the bit depth minus 8
const uint R_Y_STRENGTH = 10u; // 8 strength codes, 4 to a word
const uint R_UV_STRENGTH = 12u;
const uint R_SB64_COLS = 14u;
const uint R_SB128_COLS = 15u;
const uint R_CDEF_IDX = 16u;   // byte offset of cdef_idx (signed bytes)
const uint R_NOSKIP = 17u;     // word offset of the noskip words
const uint R_PLANE = 18u;      // 3 x (byte offset in binding 1, stride in bytes)
const uint R_SNAP = 24u;       // 3 x byte offset of the plane's snapshot in binding 2
const uint R_WIDTH = 27u;      // 3 x the plane's width in pixels
const uint R_Y_LO = 30u;       // 3 x the plane's first row of the strips
const uint R_ROWS = 33u;       // 3 x the plane's rows of the strips
const uint R_HALO = 36u;       // 3 x byte offset of the plane's halos in the record
const uint R_WORDS = 39u;

uint r(uint word) { return rec[word]; }

uint bytes_per_pixel() { return r(R_TWO_BYTES) + 1u; }

// Pixel (x, y) of plane p's snapshot, y from y_lo - 2.
int snap(uint p, int x, int y)
{
    uint row = uint(y - int(r(R_Y_LO + p)) + 2);
    uint at = r(R_SNAP + p) + (row * r(R_WIDTH + p) + uint(x)) * bytes_per_pixel();
    int v = int(snap_bytes[at]);
    if (r(R_TWO_BYTES) != 0u)
        v |= int(snap_bytes[at + 1u]) << 8;
    return v;
}
