// AV1 CDEF by rows, first level: fills the snapshot (see cdef_row.glsl) with the strips'
// rows from the frame and the halos from the record, before any block of the row is
// filtered. A workgroup per 256 bytes of a snapshot row (jobs: the planes' rows in order, two
// halo rows, the strips' rows, two halo rows, each in chunks), an invocation per 4 bytes.
#version 450
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

#include "cdef_row.glsl"

void main()
{
    if (gl_WorkGroupID.x >= pc.job_count)
        return;
    uint job = pc.first_job + gl_WorkGroupID.x;
    for (uint p = 0u; p < r(R_PLANES); p++) {
        uint row_bytes = r(R_WIDTH + p) * bytes_per_pixel();
        uint chunks = (row_bytes + 255u) / 256u;
        uint rows = r(R_ROWS + p);
        uint jobs = (rows + 4u) * chunks;
        if (job >= jobs) {
            job -= jobs;
            continue;
        }
        uint row = job / chunks; // of the snapshot: halos at 0, 1, rows + 2, rows + 3
        uint first = (job % chunks) * 256u + gl_LocalInvocationID.x * 4u;
        uint to = r(R_SNAP + p) + row * row_bytes;
        uint last = min(first + 4u, row_bytes);
        if (row >= 2u && row < rows + 2u) {
            uint from = r(R_PLANE + 2u * p) + (r(R_Y_LO + p) + row - 2u) * r(R_PLANE + 2u * p + 1u);
            for (uint b = first; b < last; b++)
                snap_bytes[to + b] = px[from + b];
        } else {
            uint from = r(R_HALO + p) + (row < 2u ? row : row - rows) * row_bytes;
            for (uint b = first; b < last; b++)
                snap_bytes[to + b] = rec_bytes[from + b];
        }
        return;
    }
}
