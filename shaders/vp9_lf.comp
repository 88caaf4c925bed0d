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
//   superblock to its right end; on the last 8 lines, whose left edge is the corner handoff's,
//   from its left end), the 8 rows above it (the rows pass reaches into them) and the first 8
//   pixels of the superblock right of it on its last 8 lines (the corner handoff).
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

// The plane of a superblock a workgroup filters.
struct Plane {
    int origin, stride; // its first pixel and its rows' stride, in pixels of the binding
    int width, lines;   // the superblock's pixels across and lines (64, or 32 subsampled)
    // How many of each the frame reaches (FFmpeg's masks mark no edge past the frame's last
    // 8x8 block; a chroma plane's last block of 4 pixels rounds up to 8, as the filters
    // reach: within the dimensions FFmpeg aligns a frame's buffers to).
    int seen_w, seen_h;
    int left, top;      // -8 where the passes reach into the superblock left / above, else 0
    uint params;        // the walk's parameters (lf_sb_walk.glsl)
    uint last;          // the plane's last 8-line segment
    bool has_next;      // a superblock right of this one (the corner handoff's)
};

Plane plane_of(uint sb, uint p)
{
    uint sh = p == 0u ? 0u : data[H_SS_H], sv = p == 0u ? 0u : data[H_SS_V];
    uint sb_cols = data[H_SB_COLS];
    uint col = sb % sb_cols, row = sb / sb_cols;
    Plane pl;
    pl.width = int(64u >> sh);
    pl.lines = int(64u >> sv);
    int plane_w = int(((data[H_COLS] * 8u >> sh) + 7u) & ~7u);
    int plane_h = int(((data[H_ROWS] * 8u >> sv) + 7u) & ~7u);
    pl.seen_w = min(pl.width, plane_w - int(col) * pl.width);
    pl.seen_h = min(pl.lines, plane_h - int(row) * pl.lines);
    pl.left = col == 0u ? 0 : -8;
    pl.top = row == 0u ? 0 : -8;
    // (In pixels: the header has bytes.)
    pl.stride = int(data[H_PLANE + 2u * p + 1u] >> (PIXEL_BITS >> 4u));
    pl.origin = int(data[H_PLANE + 2u * p] >> (PIXEL_BITS >> 4u)) +
                int(row) * pl.lines * pl.stride + int(col) * pl.width;
    pl.params = sh | (sv << 1) | (col == 0u ? 4u : 0u) | (row == 0u ? 8u : 0u);
    pl.last = (8u >> sv) - 1u;
    pl.has_next = col + 1u < sb_cols;
    return pl;
}

// The word of the frame holding pixel `x` of line `y` of the plane (x, y multiples of what a
// word holds across, from the superblock's first pixel).
uint frame_word(Plane pl, int y, int x)
{
    return uint((pl.origin + y * pl.stride + x) / WORD_PIXELS);
}

// The pixels of `buf` from `at` packed into a word.
uint packed(int at)
{
    uint word = 0u;
    for (int k = 0; k < WORD_PIXELS; k++)
        word |= uint(buf[at + k]) << (PIXEL_BITS * uint(k));
    return word;
}

// What a workgroup reads at its start, all at once: each invocation's columns-pass line,
// its share of the rows above the superblock, and (invocations below 8) the corner handoff's
// 8 pixels of the superblock right of it on line 8 last + invocation.
const uint ABOVE = 8u * ROW_WORDS / 64u;
const uint CORNER_WORDS = 8u / WP;
uint line_words[LINE_WORDS];
uint above[ABOVE];
uint corner_words[CORNER_WORDS];

void read_pixels(Plane pl, uint l)
{
    int line = int(l);
    // Not left of the superblock on the last segment's lines: their left edge is the corner
    // handoff's, filtered with the superblock left, and the superblock below that one, which
    // may be in this level, writes there.
    bool has_line = line < pl.seen_h;
    int line_left = l >> 3 == pl.last ? 0 : pl.left;
    for (uint k = 0u; k < LINE_WORDS; k++) {
        int x = int(k * WP) - 8;
        line_words[k] = has_line && x >= line_left && x < pl.seen_w
                            ? px_words[frame_word(pl, line, x)]
                            : 0u;
    }
    for (uint k = 0u; k < ABOVE; k++) {
        uint i = l + 64u * k;
        int y = int(i / ROW_WORDS) - 8, x = int((i % ROW_WORDS) * WP);
        above[k] = pl.top < 0 && x < pl.seen_w ? px_words[frame_word(pl, y, x)] : 0u;
    }
    int corner_line = int(8u * pl.last + l);
    bool corner = pl.has_next && l < 8u && corner_line < pl.seen_h;
    for (uint k = 0u; k < CORNER_WORDS; k++)
        corner_words[k] = corner ? px_words[frame_word(pl, corner_line, pl.width) + k] : 0u;
}

// The columns pass: invocation `l` filters row `l`, leaves it in the tile by rows and writes
// back what its left edge changed in the superblock left of it; the rows above go into the
// tile too.
void columns_pass(Plane pl, uint l)
{
    int line = int(l);
    for (int b = 0; b < SPAN; b++)
        buf[b] = b < int(8u + 64u)
                     ? int(pixel_of(line_words[b / WORD_PIXELS], uint(b % WORD_PIXELS)))
                     : 0;
    if (line < pl.seen_h) {
        ivec2 changed = filter_list(l >> 3);
        for (int w = 0; w < int(ROW_WORDS); w++)
            if (w * WORD_PIXELS < pl.seen_w)
                tile[uint(line + 8) * ROW_WORDS + uint(w)] = packed(8 + w * WORD_PIXELS);
        if (changed.x < 0)
            for (int w = 0; w < 8 / WORD_PIXELS; w++)
                px_words[frame_word(pl, line, -8) + uint(w)] = packed(w * WORD_PIXELS);
    }
    for (uint k = 0u; k < ABOVE; k++)
        tile[l + 64u * k] = above[k];
}

// The rows pass: invocation `l` filters column `l`, read from the tile by rows and left there
// by columns once every invocation has read its column (barriers inside). Invocation 0 also
// finds the corner handoff's edge meanwhile (the record is the next superblock's by then).
void rows_pass(Plane pl, uint l)
{
    int line = int(l);
    bool has_column = line < pl.seen_w;
    uint at_word = l / WP, at_pixel = l % WP;
    for (int b = 0; b < SPAN; b++) {
        int y = b - 8;
        buf[b] = y >= pl.top && y < pl.seen_h
                     ? int(pixel_of(tile[uint(b) * ROW_WORDS + at_word], at_pixel))
                     : 0;
    }
    if (has_column)
        filter_list(8u + (l >> 3));
    // The left edge of the next superblock's last segment.
    if (pl.has_next && l == 0u)
        corner_word = column_slots(pl.params & ~4u, pl.last, 0u).x;
    barrier();
    if (has_column) {
        for (int g = 0; g < int(COL_WORDS); g++) {
            int y = g * WORD_PIXELS - 8;
            if (y >= pl.top && y < pl.seen_h)
                tile[l * COL_WORDS + uint(g)] = packed(g * WORD_PIXELS);
        }
    }
    barrier();
}

// The corner handoff: the left edge of the last 8 lines of the superblock right of this one,
// which that superblock's columns pass leaves out (src/vp9/frame/loopfilter.rs). An invocation
// a line: this superblock's 8 pixels from the tile, the next one's as read, the next one's
// back to the frame, this one's back to the tile (barriers inside).
void corner_handoff(Plane pl, uint l)
{
    if (!pl.has_next || corner_word == 0u || int(8u * pl.last) >= pl.seen_h)
        return;
    if (l < 8u) {
        uint word = corner_word;
        int wd = ((word >> 6) & 3u) == 1u ? 4 : (((word >> 6) & 3u) == 2u ? 8 : 16);
        int line = int(8u * pl.last + l);
        uint y = uint(line + 8);
        int v[16];
        for (int j = 0; j < 8; j++)
            v[j] = int(pixel_of(tile[uint(pl.width - 8 + j) * COL_WORDS + y / WP], y % WP));
        for (int j = 0; j < 8; j++)
            v[8 + j] = int(pixel_of(corner_words[j / WORD_PIXELS], uint(j % WORD_PIXELS)));
        ivec2 r = filter_values(v, wd, int((word >> 8) & 0xffu), int((word >> 16) & 0xffu),
                                int(word >> 24));
        for (int j = 0; j < 8; j++)
            corner_out[8u * l + uint(j)] = uint(v[j]);
        if (r.y > 8) {
            for (int j = 0; j < 8; j++)
                buf[j] = v[8 + j];
            for (int w = 0; w < int(CORNER_WORDS); w++)
                px_words[frame_word(pl, line, pl.width) + uint(w)] = packed(w * WORD_PIXELS);
        }
    }
    barrier();
    // This superblock's 8 columns of those lines back in the tile, a word each.
    if (l < 8u * CORNER_WORDS) {
        uint j = l % 8u, g = l / 8u;
        uint word = 0u;
        for (uint k = 0u; k < WP; k++)
            word |= corner_out[8u * (g * WP + k) + j] << (PIXEL_BITS * k);
        tile[uint(pl.width - 8) * COL_WORDS + j * COL_WORDS + (8u * pl.last + 8u) / WP + g] =
            word;
    }
    barrier();
}

// The tile back to the frame by rows: a block of WORD_PIXELS columns' words of a group of
// WORD_PIXELS rows becomes those rows' words of those columns.
void write_back(Plane pl, uint l)
{
    uint blocks = uint(pl.seen_w / WORD_PIXELS) * COL_WORDS;
    for (uint i = l; i < blocks; i += 64u) {
        uint w = i / COL_WORDS, g = i % COL_WORDS;
        int y0 = int(g * WP) - 8;
        if (y0 < pl.top || y0 >= pl.seen_h)
            continue;
        uint column_words[WORD_PIXELS];
        for (uint j = 0u; j < WP; j++)
            column_words[j] = tile[(w * WP + j) * COL_WORDS + g];
        for (uint k = 0u; k < WP; k++) {
            uint word = 0u;
            for (uint j = 0u; j < WP; j++)
                word |= pixel_of(column_words[j], k) << (PIXEL_BITS * j);
            px_words[frame_word(pl, y0 + int(k), 0) + w] = word;
        }
    }
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
    Plane pl = plane_of(sb, p);

    // Everything read at once. The record: the 64 levels, the plane's columns and rows masks
    // (VP9Filter.mask[plane > 0]; FFmpeg filters 4:4:4 chroma with the luma masks, building no
    // others then), the E and I thresholds of each level; and the next superblock's levels and
    // columns masks, 192 bytes on, for the corner handoff. Then the pixels.
    uint masks = (pl.params & 3u) != 0u ? 32u : 16u;
    uint at_filter = (data[H_LOOPFILTER] + 192u * sb) >> 2;
    uint own = data[l < 16u ? at_filter + l
                            : (l < 32u ? at_filter + masks + (l - 16u) : H_LIMITS + (l - 32u))];
    uint next = pl.has_next && l < 24u
                    ? data[at_filter + 48u + (l < 16u ? l : masks + (l - 16u))]
                    : 0u;
    read_pixels(pl, l);

    record[l] = own;
    walk_edges(pl.params, l, true, pl.last);
    // (The walk is done with the record: the corner handoff's walk reads the next one's.)
    if (pl.has_next && l < 24u)
        record[l] = next;

    columns_pass(pl, l);
    barrier();
    rows_pass(pl, l);
    corner_handoff(pl, l);
    write_back(pl, l);
}
