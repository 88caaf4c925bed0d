// The frame path's inter blocks' residuals (src/vp9/frame/inter.rs), after their prediction
// (vp9_inter.comp) in a level of its own: a workgroup per block record adds to each plane the
// residual of its transform blocks with coefficients (vp9_itx.glsl), as FFmpeg's inter_recon
// does. Intra blocks, skipped blocks and those FFmpeg leaves unpredicted are left alone.
// Job: the record index (first_job + workgroup).
#version 450
#extension GL_GOOGLE_include_directive : require

#define WORKGROUP 32
layout(local_size_x = WORKGROUP, local_size_y = 1, local_size_z = 1) in;

// Room for a round's residuals: 32 invocations, a column each, of N + 1 words.
#define ITX_MID_WORDS 1056
#include "vp9_frame.glsl"
#include "vp9_itx.glsl"
#include "vp9_residual.glsl"

// The transform blocks of a plane with coefficients: (index << 16 | eob).
shared uint live_tx[256];
shared uint live_count;

// The residual of an inter block's plane: its transform blocks with coefficients (DCT_DCT, or
// lossless WHT), 32 / N of them a round, each invocation adding a column of its slot's block
// to the frame. Uniform across the workgroup.
void inter_residual(Block b, uint p)
{
    TxGrid g = tx_grid(b, p);
    uint inv = gl_LocalInvocationID.x;
    if (inv == 0u) {
        uint count = 0u;
        for (int t = 0; t < g.blocks.x * g.blocks.y; t++) {
            int eob = tx_eob(g, tx_index(g, t));
            if (eob != 0)
                live_tx[count++] = uint(t) << 16 | uint(eob);
        }
        live_count = count;
    }
    barrier();
    int total = int(live_count);
    uint n = 4u << g.size_log2;
    uint slot = inv / n, lane = inv % n;
    int slots = int(uint(WORKGROUP) / n);
    bool wht = header(H_LOSSLESS) != 0u;
    Plane plane = plane_of(p);
    for (int first = 0; first < total; first += slots) {
        int e = first + int(slot);
        bool live = e < total;
        int t = live ? int(live_tx[e] >> 16) : 0;
        int eob = live ? int(live_tx[e] & 0xffffu) : 0;
        uint tn = tx_index(g, t);
        itx_residual(g.size_log2, live, g.coefs + 16u * tn, eob, 0u, wht);
        if (live) {
            ivec2 at = tx_pixel(g, t);
            int x = at.x + int(lane);
            for (uint r = 0u; r < n; r++) {
                int y = at.y + int(r);
                if (x < plane.size.x && y < plane.size.y) {
                    uint a = plane.offset + uint(y * plane.stride + x);
                    cur[a] = uint8_t(clamp(int(uint(cur[a])) + itx_residual_at(n, slot, r, lane),
                                           0, 255));
                }
            }
        }
        // The round's residuals read before the next round writes its own.
        barrier();
    }
    // The list read before the next plane's replaces it.
    barrier();
}

void main()
{
    if (gl_WorkGroupID.x >= pc.job_count)
        return;
    Block b = load_block(pc.first_job + gl_WorkGroupID.x);
    if ((b.flags & (BLOCK_INTRA | BLOCK_UNPREDICTED | BLOCK_SKIP)) != 0u)
        return;
    for (uint p = 0u; p < 3u; p++)
        inter_residual(b, p);
}
