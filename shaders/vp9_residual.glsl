// Where a block's transform blocks and their coefficients are, as FFmpeg's intra_recon and
// inter_recon walk them: a grid of transform blocks over the part of the block inside the
// frame (whole 8x8 blocks: FFmpeg's end_x, end_y), in raster order, each at index n (in 4x4
// blocks) of the block's end-of-block positions and intra residuals. Needs vp9_frame.glsl.

// FFmpeg's ff_vp9_intra_txfm_type of the ten intra modes, 2 bits each.
const uint INTRA_TX_TYPE = 0xd9b06u;

uint intra_tx_type(uint mode) { return (INTRA_TX_TYPE >> (2u * mode)) & 3u; }

struct TxGrid {
    uint size_log2;  // 4 << size_log2 pixels
    ivec2 blocks;    // transform blocks across and down
    uint residuals;  // index of the block's first intra residual in the residual area
    uint eobs;       // byte offset of its first end-of-block position
    ivec2 at;        // the block's top-left pixel in the plane
};

TxGrid tx_grid(Block b, uint p)
{
    uint sh = ss_h(p), sv = ss_v(p), shift = sh + sv;
    // FFmpeg's w4, h4 and their ends inside the frame, in 4x4 luma blocks
    ivec2 w4 = ivec2(bw8(b.bs) * 2u);
    ivec2 end = min(2 * (ivec2(int(header(H_COLS)), int(header(H_ROWS))) - ivec2(b.col, b.row)),
                    w4);
    end = end >> ivec2(sh, sv);
    TxGrid g;
    g.size_log2 = p == 0u ? b.tx : b.uvtx;
    int step = 1 << g.size_log2;
    g.blocks = (end + step - 1) / step;
    // (16 residuals an end-of-block position, as the decoder stores those)
    g.residuals = header(H_RESIDUALS + p) + (b.unit * 64u >> shift);
    g.eobs = header(H_EOBS + p) + (b.unit * 4u >> shift);
    g.at = (ivec2(b.col, b.row) * 8) >> ivec2(sh, sv);
    return g;
}

// The index (in 4x4 blocks) of transform block `t` of the grid, in raster order.
uint tx_index(TxGrid g, int t) { return uint(t) << (2u * g.size_log2); }

// Its end-of-block position: a byte up to 8x8, 16 bits from 16x16 on (FFmpeg's AV_WN16A).
int tx_eob(TxGrid g, uint n)
{
    uint at = g.eobs + n;
    int lo = int(uint(data_bytes[at]));
    return g.size_log2 > 1u ? lo | (int(uint(data_bytes[at + 1u])) << 8) : lo;
}

ivec2 tx_pixel(TxGrid g, int t)
{
    ivec2 pos = ivec2(t % g.blocks.x, t / g.blocks.x);
    return g.at + (pos << g.size_log2) * 4;
}
