// FFmpeg's `dctint` at 10 and 12 bits (int64_t) for itx_1d.glsl, in 32-bit arithmetic (V3D has
// no 64-bit integers): an exact integer in three int limbs, x + y 2^11 + z 2^22. A sum,
// difference, negation or product by a constant (below 2^14) is GLSL's own ivec3 operator,
// limb by limb, exact as long as no limb leaves 32 bits; r14 carries the limbs and leaves
// x, y in [0, 2^11]. Between two r14 the transforms add at most a few products of such limbs:
// from any int32 inputs no limb exceeds 2^28 in magnitude (idct32 and iadst16 come nearest),
// and no rounded value 2^36.

#define DCT ivec3

// An int32 (a dctcoef) as a dctint.
DCT dct_of(int x) { return ivec3(x & 2047, (x >> 11) & 2047, x >> 22); }

// The low 32 bits: FFmpeg storing a dctint into an int32_t dctcoef (or an int).
int dct_store(DCT a) { return a.x + (a.y << 11) + (a.z << 22); }

// (FFmpeg's SIMD at these depths keeps no 16-bit lanes to watch.)
DCT v(DCT x) { return x; }
int v(int x) { return x; }

// (a + 2^13) >> 14, exactly.
DCT r14(DCT a)
{
    // Carried: x and y into [0, 2^11), the rest into z (arithmetic shifts floor).
    int y = a.y + (a.x >> 11);
    int x = a.x & 2047;
    int z = a.z + (y >> 11);
    y &= 2047;
    // z 2^22 is a multiple of 2^14: the value shifted is z 2^8 + w, w in [0, 256].
    int w = (x + (y << 11) + 8192) >> 14;
    // z 2^8 = (z >> 3) 2^11 + (z & 7) 2^8, and (z >> 3) 2^11 = ((z >> 3) & 2047) 2^11 +
    // (z >> 14) 2^22.
    return ivec3(((z & 7) << 8) + w, (z >> 3) & 2047, z >> 14);
}
