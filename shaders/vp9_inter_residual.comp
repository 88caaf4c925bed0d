// The frame path's residuals (src/vp9/frame/residuals.rs), after the inter blocks' prediction
// (vp9_inter.comp) in a level of its own: a workgroup computes the residuals of a group of
// transform blocks of one size (vp9_itx.glsl), 32 / N of them at once, N invocations each, an
// invocation a column; an inter block's it adds as FFmpeg's inter_recon does, an intra
// block's it keeps in the residual area for vp9_intra.comp. Each block's coefficients come
// packed (src/vp9/frame/records.rs): its first eob in scan order, which the transform reads in
// place through the scan order's inverse (a position's index in it).
// Job: a group of 16 words from first_job (a word of the frame's data) + 16 * workgroup
// (job_count counts words): 8 words each a transform block (the record at bit 10, the plane at
// bit 8, its index in the block's grid of the plane) or NONE past the group's blocks, then 8
// words each where its first packed coefficient is.
//
// The transform size is the pipeline's (a kernel per size, the host's dispatch per size):
// lavapipe runs every side of a branch its lanes do not agree on, here every size's
// transform for each group, which one size a kernel spares (docs/benchmarks-history.md).
#version 450
#extension GL_GOOGLE_include_directive : require
// variant: vp9_inter_residual_high VP9_HIGH

#define WORKGROUP 32
layout(local_size_x = WORKGROUP, local_size_y = 1, local_size_z = 1) in;
// log2 of the transform size over 4 (0: 4x4 .. 3: 32x32).
layout(constant_id = 0) const uint SIZE_LOG2 = 0u;

// Room for the residuals: 32 invocations, a column each, of N + 1 words.
#define ITX_MID_WORDS 1056
#define ITX_COEF(i) coef_in_place(i)
int coef_in_place(uint position);
#include "vp9_frame.glsl"
#include "vp9_itx.glsl"
#include "vp9_residual.glsl"

// The invocation's transform block: where its packed coefficients and its scan order's inverse
// are, and its end-of-block position.
uint packed = 0u, inverse = 0u;
int packed_eob = 0;

// Its coefficient at `position` (row-major): the packed one at the position's index in the
// scan order, where that is before the end of the block; else 0.
int coef_in_place(uint position)
{
    uint i = data[inverse + position];
    return i < uint(packed_eob) ? coef_at(packed + i) : 0;
}

const uint GROUP = 16u;
const uint SLOTS = 8u;
const uint NONE = 0xffffffffu;

void main()
{
    if (GROUP * gl_WorkGroupID.x >= pc.job_count)
        return;
    read_depth();
    uint jobs = pc.first_job + GROUP * gl_WorkGroupID.x;
    const uint size_log2 = SIZE_LOG2;
    const uint n = 4u << size_log2;
    uint inv = gl_LocalInvocationID.x;
    uint slot = inv / n, lane = inv % n;
    uint job = data[jobs + slot];
    uint first_coef = data[jobs + SLOTS + slot];
    bool live = job != NONE;
    Block b = load_block(live ? job >> 10 : data[jobs] >> 10);
    uint p = live ? (job >> 8) & 3u : 0u;
    TxGrid g = tx_grid(b, p);
    int t = int(job & 0xffu);
    uint tn = tx_index(g, t);
    int eob = live ? tx_eob(g, tn) : 0;
    // An intra block's: its luma's type from its mode (of its 4x4 under 8x8), as check_intra_mode
    // has it; its residual is kept for the intra blocks' prediction (vp9_intra.comp).
    bool intra = (b.flags & BLOCK_INTRA) != 0u;
    uint tx_type = 0u;
    if (intra && p == 0u) {
        uint bx = uint(t % g.blocks.x) << g.size_log2, by = uint(t / g.blocks.x) << g.size_log2;
        tx_type = intra_tx_type(block_mode(b, b.bs > BS_8X8 && b.tx == 0u ? by * 2u + bx : 0u));
    }
    bool lossless = header(H_LOSSLESS) != 0u;
    // The scan order of its size and type (FFmpeg's ff_vp9_scans; lossless has a row of its
    // own).
    uint scans = header(H_SCANS);
    inverse = scans + 20u + data[scans + 4u * (lossless ? 4u : size_log2) + tx_type];
    packed = header(H_COEF_STREAM) + first_coef;
    packed_eob = eob;
    itx_residual(size_log2, live, 0u, eob, tx_type, lossless);
    if (!live)
        return;
    if (intra) {
        uint residual = g.residuals + 16u * tn;
        for (uint r = 0u; r < n; r++)
            put_residual(residual + r * n + lane, itx_residual_at(n, slot, r, lane));
        return;
    }
    Plane plane = plane_of(p);
    ivec2 at = tx_pixel(g, t);
    int x = at.x + int(lane);
    for (uint r = 0u; r < n; r++) {
        int y = at.y + int(r);
        if (x < plane.size.x && y < plane.size.y) {
            uint a = plane.offset + uint(y * plane.stride + x);
            cur[a] = PIXEL(clamp(int(uint(cur[a])) + itx_residual_at(n, slot, r, lane), 0,
                                 pixel_max()));
        }
    }
}
