// AV1 CDEF by rows, first level: copies the row's rows from the frame into the record's
// snapshot (see cdef_row.glsl), before any block of the row is filtered. A workgroup per 256
// bytes of a plane's row (jobs: the planes' rows in order, each in chunks), an invocation per
// 4 bytes.
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
        uint jobs = r(R_ROWS + p) * chunks;
        if (job >= jobs) {
            job -= jobs;
            continue;
        }
        uint row = job / chunks;
        uint first = (job % chunks) * 256u + gl_LocalInvocationID.x * 4u;
        uint from = r(R_PLANE + 2u * p) + (r(R_Y_LO + p) + row) * r(R_PLANE + 2u * p + 1u);
        uint to = r(R_SNAP + p) + (row + 2u) * row_bytes;
        for (uint b = first; b < min(first + 4u, row_bytes); b++)
            rec_bytes[to + b] = px[from + b];
        return;
    }
}
