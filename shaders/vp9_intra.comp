// The frame path's intra blocks (src/vp9/frame/intra.rs): a workgroup per plane of a
// superblock reconstructs the superblock's intra transform blocks as FFmpeg's intra_recon
// does (the edges check_intra_mode builds, the prediction, the residual, which
// vp9_inter_residual.comp computed before, in the frame data's residual area), after the
// inter blocks (vp9_inter.comp). A dispatch is one level of the wavefront over superblocks (a
// superblock reads the ones left of it, above it and above left of it), so no workgroup waits
// on another.
//
// Inside the superblock the workgroup works on its plane in shared memory (at 10 and 12 bits,
// VP9_HIGH, whose pixels would not fit there, on the frame itself): it loads the
// superblock's pixels and the line above and the column left of it, and the order the host
// found for its intra transform blocks (levels, each above every block its blocks read:
// src/vp9/frame/intra.rs), and reconstructs a level's blocks side by side, the
// small ones (4x4, 8x8) in rounds of 64 / N at once, N invocations each (a row of the block
// an invocation), the big ones with the whole workgroup; then it writes the pixels of its
// intra blocks back.
//
// Job (a word of the frame's job list): where the plane's order is, in words from the job
// area's start (ORDER_*: it names the superblock and the plane). The line above is read from
// the frame itself: a superblock's loop filter runs only after the intra blocks below it that
// read its last line (src/vp9/frame/wavefront.rs), as FFmpeg's intra_pred_data keeps that
// line from before its loop filter.
#version 450
#extension GL_GOOGLE_include_directive : require
// variant: vp9_intra_high VP9_HIGH

// The workgroup: 64 invocations, or 32 (the host's choice, src/gpu/pipeline.rs): a level's
// small blocks go 64 / N at once, but on a narrow device the lanes of a level with few blocks
// idle through every step (on lavapipe, whose SIMD is 8 wide, 32 took the key frames' intra
// blocks in half the time).
layout(local_size_x = 64, local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;
#define WORKGROUP int(gl_WorkGroupSize.x)

#include "vp9_frame.glsl"
#include "vp9_residual.glsl"
#include "vp9_ipred.glsl"

#ifndef VP9_HIGH
// The frame's pixels a word (4 pixels) at a time.
layout(std430, set = 0, binding = 1) coherent buffer CurWords { uint cur_words[]; };

// The superblock's plane: 64 rows of 16 words, 4 pixels each (a transform block's rows are
// whole words, so each word has one writer).
shared uint tile[1024];
#endif
// The superblock's plane in the frame: where its first pixel is, the stride, and how much of
// the superblock lies inside the plane's decoded size (set once by main).
uint sb_first;
int sb_stride;
ivec2 sb_inside;
// The line above the superblock from the top-left pixel on, and the column left of it.
shared int sb_above[65];
shared int sb_left[64];
// The superblock's plane's order (src/vp9/frame/intra.rs writes it): which 4x4 cells its intra
// transform blocks write (a bit per cell, 16 a row), each level's first entry and counts of
// 4x4 and 8x8 blocks, and the entries (record in the superblock << 8 | transform block in the
// block), level after level, in each the 4x4 blocks, the 8x8, then the bigger.
shared uint intra_cells[8];
shared uint level_words[256];
shared uint tx_sorted[256];
// The edges of a big transform block as one line (vp9_ipred_fn.glsl: the left column bottom
// to top, the top-left, the top), built by the workgroup.
shared int ipred_line[65];
// The edge lines of a round's small transform blocks, a slot each (up to 16), the top 8 long
// with a 4x4's top-right.
const uint SLOTS = 16u;
const uint SLOT_LINE = 17u;
shared int slot_line[SLOTS * SLOT_LINE];
// The slot whose edges predict_slot reads.
uint pred_slot;

#define IPRED_BIT_DEPTH bit_depth()
#define IPRED_LINE(k) ipred_line[k]
#define IPRED_FN predict_shared
#define IPRED_DC_FN dc_shared
#include "vp9_ipred_fn.glsl"
#undef IPRED_LINE
#undef IPRED_FN
#undef IPRED_DC_FN
#define IPRED_LINE(k) slot_line[pred_slot * SLOT_LINE + uint(k)]
#define IPRED_FN predict_slot
#define IPRED_DC_FN dc_slot
#include "vp9_ipred_fn.glsl"

// An order's words: the superblock (bits 0-23) and plane (24-25); the entries (0-15) and
// levels (16-31); the cells; a word per level (first entry, bits 0-8; 4x4 blocks, 9-17; 8x8,
// 18-24); the entries.
const uint ORDER_CELLS = 2u;
const uint ORDER_LEVELS = 10u;

// A pixel of the superblock's plane, from -1 (the line above, the column left) on.
int local_pixel(int x, int y)
{
    if (y < 0)
        return sb_above[x + 1];
    if (x < 0)
        return sb_left[y];
#ifdef VP9_HIGH
    return int(uint(cur[sb_first + uint(y * sb_stride + x)]));
#else
    return int((tile[y * 16 + (x >> 2)] >> (8u * uint(x & 3))) & 255u);
#endif
}

// Writes pixels c .. c + 3 of row r of the transform block at `at` (in the superblock's
// plane), `v` (the 8-bit tile's word: whole words of a block's row have one writer).
void put_four(ivec2 at, int r, int c, ivec4 v)
{
#ifdef VP9_HIGH
    ivec2 p = at + ivec2(c, r);
    if (p.y < sb_inside.y)
        for (int k = 0; k < 4; k++)
            if (p.x + k < sb_inside.x)
                cur[sb_first + uint(p.y * sb_stride + p.x + k)] = PIXEL(v[k]);
#else
    tile[(at.y + r) * 16 + ((at.x + c) >> 2)] =
        uint(v.x) | (uint(v.y) << 8) | (uint(v.z) << 16) | (uint(v.w) << 24);
#endif
}

// check_intra_mode's values where an edge is missing: 127 and 129 at 8 bits.
int edge_below() { return (128 << (bit_depth() - 8)) - 1; }
int edge_above() { return (128 << (bit_depth() - 8)) + 1; }

// A transform block of an intra block, as check_intra_mode sees it.
struct Tx {
    ivec2 at;       // its top-left pixel in the superblock's plane
    int n, log2n;
    uint mode;      // the block's mode (the transform type's), and the one predicted
    uint conv;
    uint needs;
    bool have_top, have_left, have_right;
    int top_have, left_have;
    uint residual;  // its first intra residual (residual_at)
    int eob;
};

Tx tx_block(Block b, uint p, TxGrid g, int t, ivec2 origin)
{
    uint sh = ss_h(p), sv = ss_v(p);
    Tx x;
    x.n = 4 << g.size_log2;
    x.log2n = int(g.size_log2) + 2;
    // its position in the block, in 4x4 blocks of the plane
    int bx = (t % g.blocks.x) << g.size_log2, by = (t / g.blocks.x) << g.size_log2;
    x.at = g.at + ivec2(bx, by) * 4 - origin;
    x.mode = p == 0u ? block_mode(b, b.bs > BS_8X8 && b.tx == 0u ? uint(by * 2 + bx) : 0u)
                     : b.uvmode;
    x.have_top = b.row > 0 || by > 0;
    x.have_left = b.col > int(header(H_TILE_START + uint(b.col >> 3))) || bx > 0;
    x.have_right = bx < (int(bw8(b.bs).x * 2u) >> sh) - 1;
    x.conv = convert_mode(x.mode, x.have_left, x.have_top);
    x.needs = edge_needs(x.conv);
    // pixels inside the frame's 8x8 blocks right of and below the transform block's corner
    x.top_have = (((int(header(H_COLS)) - b.col) << (1u - sh)) - bx) * 4;
    x.left_have = (((int(header(H_ROWS)) - b.row) << (1u - sv)) - by) * 4;
    uint tn = tx_index(g, t);
    x.residual = g.residuals + 16u * tn;
    x.eob = (b.flags & BLOCK_SKIP) != 0u ? 0 : tx_eob(g, tn);
    return x;
}

// check_intra_mode's edges of `x`: the top (i < n, or 8 with a 4x4's top-right), the
// top-left, the left (top to bottom).
int edge_top(Tx x, int i)
{
    if (!x.have_top)
        return edge_below();
    if (i < x.n)
        return local_pixel(x.at.x + min(i, x.top_have - 1), x.at.y - 1);
    if (x.have_right && x.n + 4 <= x.top_have)
        return local_pixel(x.at.x + i, x.at.y - 1);
    // the top-right replicates the last pixel of the top
    return local_pixel(x.at.x + min(3, x.top_have - 1), x.at.y - 1);
}

int edge_topleft(Tx x)
{
    if (x.have_left && x.have_top)
        return local_pixel(x.at.x - 1, x.at.y - 1);
    return x.have_top ? edge_above() : edge_below();
}

int edge_left(Tx x, int i)
{
    return x.have_left ? local_pixel(x.at.x - 1, x.at.y + min(i, x.left_have - 1))
                       : edge_above();
}

// A round of small transform blocks of 4 << size_log2 (N) pixels: up to 64 / N of them, the
// entries `first` + round slot of `tx_sorted`, `count` in all from `first`, N invocations
// each. The slot's invocations build its edges, then each invocation predicts a row of its
// slot's block, adds the residual computed before it and writes the row. Every invocation calls it
// (uniform; barriers inside); the superblock's `first_record`, plane `p`.
void small_tx_round(uint size_log2, uint first, uint count, uint first_record, uint p,
                    ivec2 origin)
{
    uint inv = gl_LocalInvocationID.x;
    uint n = 4u << size_log2;
    uint slot = inv / n, lane = inv % n;
    bool live = slot < count;
    Tx x;
    x.n = int(n);
    x.log2n = int(size_log2) + 2;
    x.residual = 0u;
    x.eob = 0;
    if (live) {
        uint entry = tx_sorted[first + slot];
        Block b = load_block(first_record + ((entry >> 8) & 0xffu));
        x = tx_block(b, p, tx_grid(b, p), int(entry & 0xffu), origin);
        int top_count = x.n == 4 && (x.needs & NEEDS_TOPRIGHT) != 0u ? 8 : x.n;
        if ((x.needs & NEEDS_TOP) != 0u) {
            for (uint i = lane; i < uint(top_count); i += n)
                slot_line[slot * SLOT_LINE + n + 1u + i] = edge_top(x, int(i));
            if (lane == 0u && (x.needs & NEEDS_TOPLEFT) != 0u)
                slot_line[slot * SLOT_LINE + n] = edge_topleft(x);
        }
        if ((x.needs & NEEDS_LEFT) != 0u)
            slot_line[slot * SLOT_LINE + n - 1u - lane] = edge_left(x, int(lane));
    }
    // The edges written before they are read.
    barrier();
    if (live) {
        pred_slot = slot;
        int r = int(lane);
        int dc = dc_slot(x.conv, x.n, x.log2n);
        for (int w = 0; w < x.n / 4; w++) {
            ivec4 four;
            for (int k = 0; k < 4; k++) {
                int c = w * 4 + k;
                int v = predict_slot(x.conv, x.n, x.log2n, c, r, dc);
                if (x.eob != 0)
                    v = clamp(v + residual_at(x.residual + uint(r) * n + uint(c)), 0, pixel_max());
                four[k] = v;
            }
            put_four(x.at, r, w * 4, four);
        }
    }
    // The round's edges read before the next round replaces them.
    barrier();
}

// A big transform block (16x16, 32x32) by the whole workgroup (uniform; barriers inside).
void big_tx_block(Tx x)
{
    uint inv = gl_LocalInvocationID.x;
    int top_count = x.n;
    if ((x.needs & NEEDS_TOP) != 0u) {
        if (int(inv) < top_count)
            ipred_line[x.n + 1 + int(inv)] = edge_top(x, int(inv));
        if (inv == 0u && (x.needs & NEEDS_TOPLEFT) != 0u)
            ipred_line[x.n] = edge_topleft(x);
    }
    if ((x.needs & NEEDS_LEFT) != 0u && int(inv) < x.n)
        ipred_line[x.n - 1 - int(inv)] = edge_left(x, int(inv));
    barrier();
    int words = x.n / 4;
    int dc = dc_shared(x.conv, x.n, x.log2n);
    for (int i = int(inv); i < x.n * words; i += WORKGROUP) {
        int r = i / words, w = i % words;
        ivec4 four;
        for (int k = 0; k < 4; k++) {
            int c = w * 4 + k;
            int v = predict_shared(x.conv, x.n, x.log2n, c, r, dc);
            if (x.eob != 0)
                v = clamp(v + residual_at(x.residual + uint(r * x.n + c)), 0, pixel_max());
            four[k] = v;
        }
        put_four(x.at, r, w * 4, four);
    }
    // The block's pixels before the next reads them, its edges before they are replaced.
    barrier();
}

void main()
{
    if (gl_WorkGroupID.x >= pc.job_count)
        return;
    read_depth();
    uint inv = gl_LocalInvocationID.x;
    // The job (first_job: the word of the frame's data where the dispatch's jobs begin): the
    // word where the plane's order is.
    uint order = data[pc.first_job + gl_WorkGroupID.x];
    uint plane_sb = data[order], sizes = data[order + 1u];
    uint sb = plane_sb & 0xffffffu, p = plane_sb >> 24;
    uint entries = sizes & 0xffffu, levels = sizes >> 16;
    uint first = data[header(H_SB_BLOCKS) + 4u * sb]; // its first record
    uint sb_cols = header(H_SB_COLS);
    uint sh = ss_h(p), sv = ss_v(p);
    ivec2 origin = ivec2(int((sb % sb_cols) * 64u >> sh), int((sb / sb_cols) * 64u >> sv));
    ivec2 size = ivec2(64 >> sh, 64 >> sv);
    // the part of the superblock inside the plane's decoded size
    ivec2 inside = min(size, plane_size(p) - origin);
    sb_first = cur_at(p, origin.x, origin.y);
    sb_stride = plane_stride(p);
    sb_inside = inside;

#ifndef VP9_HIGH
    // The superblock's pixels, the line above and the column left; every load issued before
    // the first is waited for.
    uint loaded[32];
    for (int k = 0; k < 1024 / WORKGROUP; k++) {
        int i = int(inv) + WORKGROUP * k, y = i >> 4, w = i & 15;
        loaded[k] = y < inside.y && w * 4 < inside.x
                        ? cur_words[(cur_at(p, origin.x + w * 4, origin.y + y)) >> 2]
                        : 0u;
    }
    for (int k = 0; k < 1024 / WORKGROUP; k++)
        if (int(inv) + WORKGROUP * k < size.y * 16)
            tile[int(inv) + WORKGROUP * k] = loaded[k];
#endif
    // The order, read side by side.
    for (uint i = inv; i < 8u; i += uint(WORKGROUP))
        intra_cells[i] = data[order + ORDER_CELLS + i];
    for (uint i = inv; i < levels; i += uint(WORKGROUP))
        level_words[i] = data[order + ORDER_LEVELS + i];
    for (uint i = inv; i < entries; i += uint(WORKGROUP))
        tx_sorted[i] = data[order + ORDER_LEVELS + levels + i];
    for (int x = int(inv) - 1; x < size.x; x += WORKGROUP) {
        int v = 0;
        if (origin.y > 0 && origin.x + x >= 0 && x < inside.x) {
            v = get_pixel(p, origin.x + x, origin.y - 1);
        }
        sb_above[x + 1] = v;
    }
    for (int y = int(inv); y < size.y; y += WORKGROUP)
        sb_left[y] = origin.x > 0 && y < inside.y ? get_pixel(p, origin.x - 1, origin.y + y) : 0;
    barrier();

    for (uint l = 0u; l < levels; l++) {
        uint word = level_words[l];
        uint start = word & 0x1ffu, n4 = (word >> 9) & 0x1ffu, n8 = word >> 18;
        uint end = l + 1u < levels ? level_words[l + 1u] & 0x1ffu : entries;
        // small transform blocks, in rounds
        for (uint done = 0u; done < n4; done += uint(WORKGROUP) / 4u)
            small_tx_round(0u, start + done, n4 - done, first, p, origin);
        for (uint done = 0u; done < n8; done += uint(WORKGROUP) / 8u)
            small_tx_round(1u, start + n4 + done, n8 - done, first, p, origin);
        // big ones, the workgroup together
        for (uint e = start + n4 + n8; e < end; e++) {
            uint entry = tx_sorted[e];
            Block b = load_block(first + ((entry >> 8) & 0xffu));
            big_tx_block(tx_block(b, p, tx_grid(b, p), int(entry & 0xffu), origin));
        }
#ifdef VP9_HIGH
        // The level's pixels, written to the frame, before the next level reads them.
        memoryBarrierBuffer();
#endif
        barrier();
    }

#ifndef VP9_HIGH
    // The intra blocks' pixels back to the frame, a word at a time.
    for (int i = int(inv); i < size.y * 16; i += WORKGROUP) {
        int y = i >> 4, w = i & 15;
        bool intra = ((intra_cells[y >> 3] >> ((y >> 2 & 1) * 16 + w)) & 1u) != 0u;
        if (y < inside.y && w * 4 < inside.x && intra)
            cur_words[(cur_at(p, origin.x + w * 4, origin.y + y)) >> 2] = tile[i];
    }
#endif
}
