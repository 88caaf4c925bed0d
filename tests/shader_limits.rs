//! Every shader must run on a Raspberry Pi 5 (V3D 7.1, Mesa v3dv): its declared needs are read
//! from the embedded SPIR-V and checked against V3D 7.1's limits; nothing may depend on the
//! subgroup size (8 on lavapipe, 16 on V3D, 32 on NVIDIA) or use arithmetic V3D lacks.

use daedalus::gpu::{shaders::SHADERS, spirv};

const V3D_SHARED_BYTES: u32 = 16 * 1024;
const V3D_INVOCATIONS: u32 = 256;
const V3D_STORAGE_BUFFERS: u32 = 8;
const V3D_PUSH_BYTES: u32 = 128;

// SPIR-V capabilities a shader may declare: Shader, the 8/16-bit storage ones (v3dv has
// storageBuffer8BitAccess and storageBuffer16BitAccess), and nothing that means 8/16/64-bit
// arithmetic, floats of 16 bits, or subgroup operations.
const CAP_SHADER: u32 = 1;
const CAP_STORAGE_BUFFER_16BIT: u32 = 4433;
const CAP_STORAGE_BUFFER_8BIT: u32 = 4448;
const ALLOWED_CAPABILITIES: [u32; 3] = [
    CAP_SHADER,
    CAP_STORAGE_BUFFER_16BIT,
    CAP_STORAGE_BUFFER_8BIT,
];

// Built-ins whose values depend on the subgroup size.
const SUBGROUP_BUILTINS: [(u32, &str); 8] = [
    (36, "SubgroupSize"),
    (37, "NumSubgroups"),
    (40, "SubgroupId"),
    (41, "SubgroupLocalInvocationId"),
    (4416, "SubgroupEqMask"),
    (4417, "SubgroupGeMask"),
    (4418, "SubgroupGtMask"),
    (4419, "SubgroupLeMask"),
];

#[test]
fn every_shader_fits_v3d_7_1() {
    assert!(!SHADERS.is_empty(), "no shader is embedded");
    let mut problems = Vec::new();
    for (name, bytes) in SHADERS {
        let words = spirv::words(bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let n = spirv::reflect(&words).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(n.invocations() > 0, "{name}: no LocalSize found");
        if n.shared_bytes > V3D_SHARED_BYTES {
            problems.push(format!(
                "{name}: {} bytes of shared memory > {V3D_SHARED_BYTES}",
                n.shared_bytes
            ));
        }
        if n.invocations() > V3D_INVOCATIONS {
            problems.push(format!(
                "{name}: {} invocations > {V3D_INVOCATIONS}",
                n.invocations()
            ));
        }
        if n.storage_buffers > V3D_STORAGE_BUFFERS {
            problems.push(format!(
                "{name}: {} storage buffers > {V3D_STORAGE_BUFFERS}",
                n.storage_buffers
            ));
        }
        if n.push_constant_bytes > V3D_PUSH_BYTES {
            problems.push(format!(
                "{name}: {} push-constant bytes > {V3D_PUSH_BYTES}",
                n.push_constant_bytes
            ));
        }
        for c in &n.capabilities {
            if !ALLOWED_CAPABILITIES.contains(c) {
                problems.push(format!(
                    "{name}: capability {c} is not known to be available on V3D 7.1"
                ));
            }
        }
        for b in &n.builtins {
            if let Some((_, what)) = SUBGROUP_BUILTINS.iter().find(|(id, _)| id == b) {
                problems.push(format!(
                    "{name}: uses {what}, which depends on the subgroup size"
                ));
            }
        }
        println!(
            "{name}: workgroup {:?}, {} B shared, {} storage buffers, {} B push constants",
            n.workgroup_size, n.shared_bytes, n.storage_buffers, n.push_constant_bytes
        );
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The reflection itself must see what the shaders declare: itx8 is 32 blocks of 8
/// invocations with a padded 8x9 int intermediate and 8 lane records each, and four storage
/// buffers.
#[test]
fn reflection_reads_known_values() {
    let bytes = daedalus::gpu::shaders::spirv("itx8").expect("itx8 is embedded");
    let n = spirv::reflect(&spirv::words(bytes).unwrap()).unwrap();
    assert_eq!(n.workgroup_size, [256, 1, 1]);
    assert_eq!(n.shared_bytes, 32 * 8 * 9 * 4 + 32 * 8 * 4);
    assert_eq!(n.storage_buffers, 4);
    assert_eq!(n.push_constant_bytes, 8);
}
