// The walk of a superblock plane's edge masks (src/kernels/lf_sb.rs), shared by the per-call
// path's superblock loop filter (lf_sb_pass.glsl) and the frame path's (vp9_lf.comp): the
// workgroup walks the masks as FFmpeg's `ff_vp9_loopfilter_sb` does, an invocation per segment
// and step of the walk, into a table per pass, then lists each (pass, segment)'s edges in
// FFmpeg's order. The includer loads the plane's record into `record` (256 bytes: the levels of
// the 64 blocks, the columns pass's masks [row][16, 8, 4, inner 4], the rows pass's, the E and
// I thresholds of each level).

const uint EDGES = 16u;

// The plane's record (64 words, loaded by the whole workgroup at once: one round trip to the
// job data, host memory where it is uploaded) and the tables the walk writes: per pass, 16
// slots for each of the 8 segments, an edge word or 0; then each (pass, segment) list's edges
// moved to its front, in order (`list_edges`): `list_count` of them, reaching `list_reach`.
shared uint record[64];
shared uint table[2u * EDGES * 8u];
shared uint list_count[16];
shared ivec2 list_reach[16];

uint record_byte(uint i)
{
    return (record[i >> 2] >> (8u * (i & 3u))) & 0xffu;
}

// Mask byte `width` (0: 16, 1: 8, 2: 4, 3: inner 4) of mask row `row` of pass `pass`.
uint mask_byte(uint pass, uint row, uint width)
{
    return record_byte(64u + 32u * pass + 4u * row + width);
}

// The table word of an edge at `pos` (0..63) `code` wide (1: 4, 2: 8, 3: 16) with the
// thresholds of block level `level_at`'s level: E, I and H (src/kernels/lf_sb.rs).
uint edge_at(uint pos, uint code, uint level_at)
{
    uint l = record_byte(level_at) & 63u;
    return pos | (code << 6) | (record_byte(128u + l) << 8) | (record_byte(192u + l) << 16) |
           ((l >> 4) << 24);
}

// FFmpeg's rule for a block edge across two 8-line halves (marked, 16 wide, 8 wide, where its
// level is): the word of half `which`. A 16-wide first half takes the 16-line function (the
// second half too, with the first's level, where it is 16 wide as well) and leaves a narrower
// second half alone; otherwise each marked half takes its own width and level.
uint block_edge(uint which, uint pos, bvec3 first, uint first_at, bvec3 second, uint second_at)
{
    if (first.x && first.y)
        return which == 0u || second.y ? edge_at(pos, 3u, first_at) : 0u;
    bvec3 h = which == 0u ? first : second;
    return h.x ? edge_at(pos, h.z ? 2u : 1u, which == 0u ? first_at : second_at) : 0u;
}

// One step of FFmpeg's walk of the columns pass (`filter_plane_cols`): segment `seg`, mask
// column `bit`, into slots `2 bit` (the block edge) and `2 bit + 1` (the inner edge).
uvec2 column_slots(uint params, uint seg, uint bit)
{
    uint ss_h = params & 1u, ss_v = (params >> 1) & 1u;
    uint pair = seg >> 1, which = seg & 1u; // the pair of mask rows, and which of the two
    if (pair >= (4u >> ss_v))
        return uvec2(0u);
    uint y = pair * (2u << ss_v), y2 = y + 1u + ss_v;
    uint x = 1u << bit;
    uint a0 = mask_byte(0u, y, 0u), a1 = mask_byte(0u, y, 1u), a2 = mask_byte(0u, y, 2u);
    uint a3 = mask_byte(0u, y, 3u);
    uint b0 = mask_byte(0u, y2, 0u), b1 = mask_byte(0u, y2, 1u), b2 = mask_byte(0u, y2, 2u);
    uint b3 = mask_byte(0u, y2, 3u);
    uint hm1 = a0 | a1 | a2, hm2 = b1 | b2;
    if (((hm1 | hm2 | a3 | b3) & ~(x - 1u)) == 0u)
        return uvec2(0u);
    uint pos = bit * (8u >> ss_h);
    uint l = y * 8u + (ss_h != 0u ? (bit & ~1u) : bit);
    uint below = 8u << ss_v;
    uvec2 slots = uvec2(0u);
    if ((params & 4u) == 0u || bit > 0u)
        slots.x = block_edge(which, pos, bvec3((hm1 & x) != 0u, (a0 & x) != 0u, (a1 & x) != 0u), l,
                             bvec3((hm2 & x) != 0u, (b0 & x) != 0u, (b1 & x) != 0u), l + below);
    uint inner = which == 0u ? a3 : b3;
    if (ss_h == 0u && (inner & x) != 0u)
        slots.y = edge_at(pos + 4u, 1u, l + which * below);
    return slots;
}

// One step of FFmpeg's walk of the rows pass (`filter_plane_rows`): segment `seg`, mask row
// `row`, into slots `2 row` (the block edge) and `2 row + 1` (the inner edge).
uvec2 row_slots(uint params, uint seg, uint row)
{
    uint ss_h = params & 1u, ss_v = (params >> 1) & 1u;
    uint bits = 2u << ss_h; // mask bits per pair of 8-line halves
    uint pair = seg >> 1, which = seg & 1u;
    if (pair >= 8u / bits)
        return uvec2(0u);
    uint m0 = mask_byte(1u, row, 0u), m1 = mask_byte(1u, row, 1u), m2 = mask_byte(1u, row, 2u);
    uint m3 = mask_byte(1u, row, 3u);
    uint vm = m0 | m1 | m2;
    uint x = 1u << (pair * bits);
    if ((vm & ~(x - 1u)) == 0u)
        return uvec2(0u);
    uint right = 1u + ss_h;
    uint x2 = x << right;
    uint pos = row * (8u >> ss_v);
    uint l = (ss_v != 0u ? (row & ~1u) : row) * 8u + pair * bits;
    uvec2 slots = uvec2(0u);
    if ((params & 8u) == 0u || row > 0u)
        slots.x = block_edge(which, pos, bvec3((vm & x) != 0u, (m0 & x) != 0u, (m1 & x) != 0u), l,
                             bvec3((vm & x2) != 0u, (m0 & x2) != 0u, (m1 & x2) != 0u), l + right);
    if (ss_v == 0u && (m3 & (which == 0u ? x : x2)) != 0u)
        slots.y = edge_at(pos + 4u, 1u, l + which * right);
    return slots;
}

int reach_of(uint word)
{
    return ((word >> 6) & 3u) == 3u ? 8 : 4;
}


// Invocation `list` < 16 moves the edges of list `list` (pass `list >> 3`, segment `list & 7`)
// to the front of its slots, in order, and counts them and what they reach across the lines:
// [x, y), empty where there are none. Each line of a pass then walks only its segment's edges
// (where every line walking all 16 slots, twice a pass, took the H100 about a quarter of a
// superblock's time: docs/benchmarks-history.md).
void list_edges(uint list)
{
    uint at = list * EDGES, n = 0u;
    int lo = 64, hi = 0;
    for (uint k = 0u; k < EDGES; k++) {
        uint word = table[at + k];
        if (word == 0u)
            continue;
        table[at + n] = word;
        n++;
        int pos = int(word & 63u);
        lo = min(lo, pos - reach_of(word));
        hi = max(hi, pos + reach_of(word));
    }
    list_count[list] = n;
    list_reach[list] = ivec2(lo, hi);
}

// Fills the tables of the plane with parameters `params` (bit 0: ss_h, bit 1: ss_v, bit 2: at
// the frame's left, bit 3: at its top) and lists their edges: every invocation `l` (64) of the
// workgroup, in uniform control flow, its record written (barriers inside).
// `without_last_left_edge`: the columns pass leaves out the left edge of the plane's last
// segment `last` (the frame path's corner handoff filters it with the superblock left).
void walk_edges(uint params, uint l, bool without_last_left_edge, uint last)
{
    barrier();
    uint seg = l >> 3, walk_step = l & 7u;
    uint at = seg * EDGES + 2u * walk_step;
    uvec2 c = column_slots(params, seg, walk_step);
    uvec2 r = row_slots(params, seg, walk_step);
    if (without_last_left_edge && seg == last && walk_step == 0u)
        c.x = 0u;
    table[at] = c.x;
    table[at + 1u] = c.y;
    table[EDGES * 8u + at] = r.x;
    table[EDGES * 8u + at + 1u] = r.y;
    barrier();
    if (l < 16u)
        list_edges(l);
    barrier();
}
