// The frame path's loop filter (src/vp9/frame/loopfilter.rs): one plane of a superblock a
// workgroup, FFmpeg's columns pass, then its rows pass, then the corner handoff, over the edge
// masks and levels the decoder built while parsing (FFmpeg's VP9Filter; the walk is
// lf_sb_walk.glsl's) and the frame's thresholds. The dispatches keep FFmpeg's order as a
// wavefront over the superblocks.
//
// A level of that wavefront costs the latency of its slowest workgroup, so a workgroup goes to
// the frame's memory once and back once: it reads everything at its start, all at once, passes
// the pixels from pass to pass in shared memory, and writes them back at its end by words.
// - It reads the record, each line of the columns pass (a row, from 8 pixels left of the
//   superblock to its right end), the 8 rows above it (the rows pass reaches into them) and
//   the first 8 pixels of the superblock right of it on its last 8 lines (the corner handoff).
// - The columns pass filters each line in the invocation's own memory and leaves it in `tile`
//   by rows; the rows pass reads its column from there, filters it, and leaves it in `tile`
//   by columns (a word holds one column's pixels: no two invocations write a word).
// - The tile goes back to the frame by rows, every word of what the superblock's passes reach;
//   the 8 pixels left of a line go back where its left edge changed them.
// No other workgroup of the level reads or writes these pixels (the wavefront's order), so
// writing pixels back unchanged changes nothing; and none of them is read from the frame after
// the workgroup wrote it, so nothing is coherent and no memory barrier is needed.
//
// VP9_HIGH (the variant vp9_lf_high): 10 and 12 bits, the depth the header's, 16-bit pixels.
//
// Job (a word of the frame's job list): the superblock (bits 0-23), the plane (24-25). The
// host hands over planes whose offsets and strides are whole words.
#version 450
#extension GL_GOOGLE_include_directive : require
// variant: vp9_lf_high VP9_HIGH

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Data { uint data[]; };
// The frame's pixels, a word at a time.
layout(std430, set = 0, binding = 1) buffer PixelWords { uint px_words[]; };

layout(push_constant) uniform Push {
    uint first_job;
    uint job_count;
} pc;

#ifdef VP9_HIGH
// (Read once by main: see vp9_frame.glsl's read_depth.)
#define LF_BIT_DEPTH lf_depth
int lf_depth = 10;
const int WORD_PIXELS = 2;
#else
const int WORD_PIXELS = 4;
#endif
const uint WP = uint(WORD_PIXELS);
const uint PIXEL_BITS = 32u / WP;
const uint PIXEL_MASK = (1u << PIXEL_BITS) - 1u;

#include "lf_filter.glsl"
#include "lf_sb_walk.glsl"

// Header words (vp9_frame.glsl).
const uint H_COLS = 0u;
const uint H_ROWS = 1u;
const uint H_SB_COLS = 2u;
const uint H_SS_H = 4u;
const uint H_SS_V = 5u;
const uint H_PLANE = 8u;
const uint H_LOOPFILTER = 21u;
const uint H_BIT_DEPTH = 23u;
const uint H_LIMITS = 176u;

// The tile: the superblock's 64 lines and the 8 above them, 72 rows of 64 pixels; by rows
// (ROW_WORDS words a row) after the columns pass, by columns (COL_WORDS words a column) after
// the rows pass.
const uint ROW_WORDS = 64u / WP;
const uint COL_WORDS = 72u / WP;
shared uint tile[72u * ROW_WORDS];
// A columns pass's line in words: 8 pixels left of the superblock to its right end.
const uint LINE_WORDS = 72u / WP;
// The corner handoff's edge, and this superblock's 8 pixels of each of its lines as filtered.
shared uint corner_word;
shared uint corner_out[64];

// A line's pixels across, buf[i + 8] pixel i: 8 before the superblock to 8 after it, as
// the filters read them (an edge at 60 reads up to 75). Indexed at run time, it lives in
// private memory (on V3D scratch memory behind the TMU, as shared memory is there too).
const int SPAN = 80;
int buf[SPAN];

uint pixel_of(uint word, uint k)
{
    return (word >> (PIXEL_BITS * k)) & PIXEL_MASK;
}

// Filters the line in `buf` with the edges of list `list`, in order; returns the pixels that
// changed, [x, y) (empty where none did).
ivec2 filter_list(uint list)
{
    ivec2 changed = ivec2(64, -8);
    uint edges = list_count[list];
    for (uint k = 0u; k < edges; k++) {
        uint word = table[list * EDGES + k];
        int wd = ((word >> 6) & 3u) == 1u ? 4 : (((word >> 6) & 3u) == 2u ? 8 : 16);
        int pos = int(word & 63u);
        int v[16];
        for (int j = 0; j < 16; j++)
            v[j] = buf[pos + j];
        ivec2 r = filter_values(v, wd, int((word >> 8) & 0xffu), int((word >> 16) & 0xffu),
                                int(word >> 24));
        if (r.y > r.x) {
            // All 16 back, the unchanged ones as they were: indices known when compiled keep
            // `v` in registers.
            for (int j = 0; j < 16; j++)
                buf[pos + j] = v[j];
            changed = ivec2(min(changed.x, pos - 8 + r.x), max(changed.y, pos - 8 + r.y));
        }
    }
    return changed;
}

void main()
{
    if (gl_WorkGroupID.x >= pc.job_count)
        return;
#ifdef VP9_HIGH
    lf_depth = int(data[H_BIT_DEPTH]);
#endif
    uint l = gl_LocalInvocationID.x;
    // (first_job: the word of the frame's data where the dispatch's jobs begin.)
    uint job = data[pc.first_job + gl_WorkGroupID.x];
    uint sb = job & 0xffffffu, p = (job >> 24) & 3u;
    uint sh = p == 0u ? 0u : data[H_SS_H], sv = p == 0u ? 0u : data[H_SS_V];
    uint sb_cols = data[H_SB_COLS];
    uint col = sb % sb_cols, row = sb / sb_cols;
    bool has_next = col + 1u < sb_cols;
    // The superblock's plane: its width and lines, and how many of each the frame reaches
    // (FFmpeg's masks mark no edge past the frame's last 8x8 block; a chroma plane's last
    // block of 4 pixels rounds up to 8, as the filters reach: within the dimensions FFmpeg
    // aligns a frame's buffers to).
    int width = int(64u >> sh), lines = int(64u >> sv);
    int plane_w = int(((data[H_COLS] * 8u >> sh) + 7u) & ~7u);
    int plane_h = int(((data[H_ROWS] * 8u >> sv) + 7u) & ~7u);
    int seen_w = min(width, plane_w - int(col) * width);
    int seen_h = min(lines, plane_h - int(row) * lines);
    int left = col == 0u ? 0 : -8, top = row == 0u ? 0 : -8;
    // (In pixels: the header has bytes.)
    int stride = int(data[H_PLANE + 2u * p + 1u] >> (PIXEL_BITS >> 4u));
    int origin = int(data[H_PLANE + 2u * p] >> (PIXEL_BITS >> 4u)) +
                 int(row) * lines * stride + int(col) * width;
    uint params = sh | (sv << 1) | (col == 0u ? 4u : 0u) | (row == 0u ? 8u : 0u);
    uint last = (8u >> sv) - 1u; // the plane's last 8-line segment
    int line = int(l);

    // Everything read at once. The record: the 64 levels, the plane's columns and rows masks
    // (VP9Filter.mask[plane > 0]; FFmpeg filters 4:4:4 chroma with the luma masks, building no
    // others then), the E and I thresholds of each level; and the next superblock's levels and
    // columns masks, 192 bytes on, for the corner handoff.
    uint masks = (sh | sv) != 0u ? 32u : 16u;
    uint at_filter = (data[H_LOOPFILTER] + 192u * sb) >> 2;
    uint own = data[l < 16u ? at_filter + l
                            : (l < 32u ? at_filter + masks + (l - 16u) : H_LIMITS + (l - 32u))];
    uint next = has_next && l < 24u ? data[at_filter + 48u + (l < 16u ? l : masks + (l - 16u))]
                                    : 0u;
    // This invocation's line of the columns pass. (Not left of the superblock on the last
    // segment's lines: their left edge is the corner handoff's, filtered with the superblock
    // left, and the superblock below that one, which may be in this level, writes there.)
    bool has_line = line < seen_h;
    int line_left = uint(line) >> 3 == last ? 0 : left;
    uint got[LINE_WORDS];
    for (uint k = 0u; k < LINE_WORDS; k++) {
        int x = int(k * WP) - 8;
        got[k] = has_line && x >= line_left && x < seen_w
                     ? px_words[(origin + line * stride + x) / WORD_PIXELS]
                     : 0u;
    }
    // The rows above: ROW_WORDS words of each of 8, spread over the invocations.
    const uint ABOVE = 8u * ROW_WORDS / 64u;
    uint above[ABOVE];
    for (uint k = 0u; k < ABOVE; k++) {
        uint i = l + 64u * k;
        int y = int(i / ROW_WORDS) - 8, x = int((i % ROW_WORDS) * WP);
        above[k] = top < 0 && x < seen_w ? px_words[(origin + y * stride + x) / WORD_PIXELS]
                                         : 0u;
    }
    // The superblock right of this one, 8 pixels of each of its last 8 lines (invocation k
    // < 8 its line 8 last + k).
    const uint CORNER_WORDS = 8u / WP;
    int corner_line = int(8u * last + l);
    bool corners = has_next && l < 8u && corner_line < seen_h;
    uint next_px[CORNER_WORDS];
    for (uint k = 0u; k < CORNER_WORDS; k++)
        next_px[k] = corners ? px_words[(origin + corner_line * stride + width) / WORD_PIXELS +
                                        int(k)]
                             : 0u;

    record[l] = own;
    walk_edges(params, l, true, last);
    // (The walk is done with the record: the corner handoff's walk reads the next one's.)
    if (has_next && l < 24u)
        record[l] = next;

    // The columns pass: invocation `line` filters row `line`, and leaves it in the tile.
    for (int b = 0; b < SPAN; b++)
        buf[b] = b < int(8u + 64u) ? int(pixel_of(got[b / WORD_PIXELS], uint(b % WORD_PIXELS)))
                                   : 0;
    if (has_line) {
        ivec2 changed = filter_list(uint(line) >> 3);
        for (int w = 0; w < int(ROW_WORDS); w++) {
            if (w * WORD_PIXELS < seen_w) {
                uint word = 0u;
                for (int k = 0; k < WORD_PIXELS; k++)
                    word |= uint(buf[8 + w * WORD_PIXELS + k]) << (PIXEL_BITS * uint(k));
                tile[uint(line + 8) * ROW_WORDS + uint(w)] = word;
            }
        }
        // Its left edge's changes in the superblock left of it: back now.
        if (changed.x < 0) {
            for (int w = 0; w < 8 / WORD_PIXELS; w++) {
                uint word = 0u;
                for (int k = 0; k < WORD_PIXELS; k++)
                    word |= uint(buf[w * WORD_PIXELS + k]) << (PIXEL_BITS * uint(k));
                px_words[(origin + line * stride - 8) / WORD_PIXELS + w] = word;
            }
        }
    }
    for (uint k = 0u; k < ABOVE; k++)
        tile[l + 64u * k] = above[k];
    barrier();

    // The rows pass: invocation `line` filters column `line`, read from the tile by rows and
    // left there by columns (once every invocation has read its column).
    bool has_column = line < seen_w;
    uint at_word = uint(line) / WP, at_pixel = uint(line) % WP;
    for (int b = 0; b < SPAN; b++) {
        int y = b - 8;
        buf[b] = y >= top && y < seen_h
                     ? int(pixel_of(tile[uint(b) * ROW_WORDS + at_word], at_pixel))
                     : 0;
    }
    if (has_column)
        filter_list(8u + (uint(line) >> 3));
    // The corner handoff's edge: the left edge of the next superblock's last segment.
    if (has_next && l == 0u)
        corner_word = column_slots(params & ~4u, last, 0u).x;
    barrier();
    if (has_column) {
        for (int g = 0; g < int(COL_WORDS); g++) {
            int y = g * WORD_PIXELS - 8;
            if (y >= top && y < seen_h) {
                uint word = 0u;
                for (int k = 0; k < WORD_PIXELS; k++)
                    word |= uint(buf[g * WORD_PIXELS + k]) << (PIXEL_BITS * uint(k));
                tile[uint(line) * COL_WORDS + uint(g)] = word;
            }
        }
    }
    barrier();

    // The corner handoff: the left edge of the last 8 lines of the superblock right of this
    // one, which that superblock's columns pass leaves out (src/vp9/frame/loopfilter.rs). An
    // invocation a line: this superblock's 8 pixels from the tile, the next one's as read.
    bool handoff = has_next && corner_word != 0u && int(8u * last) < seen_h;
    if (handoff) {
        if (l < 8u) {
            uint word = corner_word;
            int wd = ((word >> 6) & 3u) == 1u ? 4 : (((word >> 6) & 3u) == 2u ? 8 : 16);
            uint y = uint(corner_line + 8);
            int v[16];
            for (int j = 0; j < 8; j++)
                v[j] = int(pixel_of(tile[uint(width - 8 + j) * COL_WORDS + y / WP], y % WP));
            for (int j = 0; j < 8; j++)
                v[8 + j] = int(pixel_of(next_px[j / WORD_PIXELS], uint(j % WORD_PIXELS)));
            ivec2 r = filter_values(v, wd, int((word >> 8) & 0xffu), int((word >> 16) & 0xffu),
                                    int(word >> 24));
            for (int j = 0; j < 8; j++)
                corner_out[8u * l + uint(j)] = uint(v[j]);
            if (r.y > 8) {
                for (int w = 0; w < int(CORNER_WORDS); w++) {
                    uint out_word = 0u;
                    for (int k = 0; k < WORD_PIXELS; k++)
                        out_word |= uint(v[8 + w * WORD_PIXELS + k]) << (PIXEL_BITS * uint(k));
                    px_words[(origin + corner_line * stride + width) / WORD_PIXELS + w] =
                        out_word;
                }
            }
        }
        barrier();
        // This superblock's 8 columns of those lines back in the tile, a word each.
        if (l < 8u * CORNER_WORDS) {
            uint j = l % 8u, g = l / 8u;
            uint word = 0u;
            for (uint k = 0u; k < WP; k++)
                word |= corner_out[8u * (g * WP + k) + j] << (PIXEL_BITS * k);
            tile[uint(width - 8) * COL_WORDS + j * COL_WORDS + (8u * last + 8u) / WP + g] = word;
        }
        barrier();
    }

    // The tile back to the frame by rows: a block of WORD_PIXELS columns' words of a group of
    // WORD_PIXELS rows becomes those rows' words of those columns.
    uint blocks = uint(seen_w / WORD_PIXELS) * COL_WORDS;
    for (uint i = l; i < blocks; i += 64u) {
        uint w = i / COL_WORDS, g = i % COL_WORDS;
        int y0 = int(g * WP) - 8;
        if (y0 < top || y0 >= seen_h)
            continue;
        uint column_words[WORD_PIXELS];
        for (uint j = 0u; j < WP; j++)
            column_words[j] = tile[(w * WP + j) * COL_WORDS + g];
        for (uint k = 0u; k < WP; k++) {
            uint word = 0u;
            for (uint j = 0u; j < WP; j++)
                word |= pixel_of(column_words[j], k) << (PIXEL_BITS * j);
            px_words[(origin + (y0 + int(k)) * stride) / WORD_PIXELS + int(w)] = word;
        }
    }
}
