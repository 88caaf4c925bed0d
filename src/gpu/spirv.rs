//! Reads what a compute shader declares from its SPIR-V: workgroup size, shared memory,
//! storage buffers (the descriptors it binds: views of one binding count once) and
//! push-constant bytes. The runtime checks these against the device's
//! limits before building a pipeline; a test checks them against V3D 7.1's.

use std::collections::HashMap;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Needs {
    pub workgroup_size: [u32; 3],
    pub shared_bytes: u32,
    pub storage_buffers: u32,
    pub push_constant_bytes: u32,
    /// `OpCapability` operands (SPIR-V `Capability` enumerants).
    pub capabilities: Vec<u32>,
    /// `BuiltIn` decorations used (SPIR-V `BuiltIn` enumerants).
    pub builtins: Vec<u32>,
}

impl Needs {
    pub fn invocations(&self) -> u32 {
        self.workgroup_size.iter().product()
    }
}

const MAGIC: u32 = 0x0723_0203;

// Opcodes and enumerants used here (SPIR-V 1.x unified spec).
const OP_EXECUTION_MODE: u32 = 16;
const OP_CAPABILITY: u32 = 17;
const OP_TYPE_INT: u32 = 21;
const OP_TYPE_FLOAT: u32 = 22;
const OP_TYPE_VECTOR: u32 = 23;
const OP_TYPE_ARRAY: u32 = 28;
const OP_TYPE_RUNTIME_ARRAY: u32 = 29;
const OP_TYPE_STRUCT: u32 = 30;
const OP_TYPE_POINTER: u32 = 32;
const OP_CONSTANT: u32 = 43;
const OP_VARIABLE: u32 = 59;
const OP_DECORATE: u32 = 71;
const OP_MEMBER_DECORATE: u32 = 72;
const MODE_LOCAL_SIZE: u32 = 17;
const DECORATION_BUFFER_BLOCK: u32 = 3;
const DECORATION_BINDING: u32 = 33;
const DECORATION_DESCRIPTOR_SET: u32 = 34;
const DECORATION_BUILTIN: u32 = 11;
const DECORATION_OFFSET: u32 = 35;
const CLASS_UNIFORM: u32 = 2;
const CLASS_WORKGROUP: u32 = 4;
const CLASS_PUSH_CONSTANT: u32 = 9;
const CLASS_STORAGE_BUFFER: u32 = 12;

#[derive(Clone, Debug)]
enum Type {
    Scalar(u32),
    Vector(u32, u32),
    Array(u32, u32), // element type, length constant id
    RuntimeArray,
    Struct(Vec<u32>),
    Pointer(u32), // pointee
}

/// Converts the bytes of a .spv file to words.
pub fn words(bytes: &[u8]) -> Result<Vec<u32>, String> {
    if bytes.len() % 4 != 0 || bytes.len() < 20 {
        return Err("SPIR-V length is not a positive multiple of 4".into());
    }
    let w: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    if w[0] != MAGIC {
        return Err("not SPIR-V (bad magic)".into());
    }
    Ok(w)
}

pub fn reflect(words: &[u32]) -> Result<Needs, String> {
    let mut needs = Needs::default();
    let module = Module::read(words, &mut needs)?;
    module.count_variables(&mut needs)?;
    Ok(needs)
}

/// What [`reflect`] keeps of a module's declarations to size its variables.
#[derive(Default)]
struct Module {
    types: HashMap<u32, Type>,
    constants: HashMap<u32, u32>,
    buffer_blocks: Vec<u32>,
    member_offsets: HashMap<(u32, u32), u32>,
    /// (pointer type, id, storage class)
    variables: Vec<(u32, u32, u32)>,
    /// Per variable id: its descriptor set and binding. Variables that alias one binding (a
    /// buffer seen as words and as bytes) use one descriptor.
    bindings: HashMap<u32, (u32, u32)>,
}

impl Module {
    /// Reads the instructions after the header: the needs they state outright into `needs`,
    /// the declarations into the module.
    fn read(words: &[u32], needs: &mut Needs) -> Result<Module, String> {
        let mut m = Module::default();
        let mut at = 5;
        while at < words.len() {
            let count = (words[at] >> 16) as usize;
            let op = words[at] & 0xffff;
            if count == 0 || at + count > words.len() {
                return Err(format!("malformed SPIR-V instruction at word {at}"));
            }
            let a = &words[at + 1..at + count];
            match op {
                OP_CAPABILITY => needs.capabilities.push(a[0]),
                OP_DECORATE if a.get(1) == Some(&DECORATION_BUILTIN) && a.len() >= 3 => {
                    needs.builtins.push(a[2])
                }
                OP_EXECUTION_MODE if a.get(1) == Some(&MODE_LOCAL_SIZE) && a.len() >= 5 => {
                    needs.workgroup_size = [a[2], a[3], a[4]];
                }
                OP_TYPE_INT | OP_TYPE_FLOAT => {
                    m.types.insert(a[0], Type::Scalar(a[1] / 8));
                }
                OP_TYPE_VECTOR => {
                    m.types.insert(a[0], Type::Vector(a[1], a[2]));
                }
                OP_TYPE_ARRAY => {
                    m.types.insert(a[0], Type::Array(a[1], a[2]));
                }
                OP_TYPE_RUNTIME_ARRAY => {
                    m.types.insert(a[0], Type::RuntimeArray);
                }
                OP_TYPE_STRUCT => {
                    m.types.insert(a[0], Type::Struct(a[1..].to_vec()));
                }
                OP_TYPE_POINTER => {
                    m.types.insert(a[0], Type::Pointer(a[2]));
                }
                OP_CONSTANT if a.len() >= 3 => {
                    m.constants.insert(a[1], a[2]);
                }
                OP_VARIABLE => m.variables.push((a[0], a[1], a[2])),
                OP_DECORATE if a.get(1) == Some(&DECORATION_BUFFER_BLOCK) => {
                    m.buffer_blocks.push(a[0])
                }
                OP_DECORATE if a.get(1) == Some(&DECORATION_BINDING) && a.len() >= 3 => {
                    m.bindings.entry(a[0]).or_insert((0, 0)).1 = a[2];
                }
                OP_DECORATE if a.get(1) == Some(&DECORATION_DESCRIPTOR_SET) && a.len() >= 3 => {
                    m.bindings.entry(a[0]).or_insert((0, 0)).0 = a[2];
                }
                OP_MEMBER_DECORATE if a.get(2) == Some(&DECORATION_OFFSET) && a.len() >= 4 => {
                    m.member_offsets.insert((a[0], a[1]), a[3]);
                }
                _ => {}
            }
            at += count;
        }
        Ok(m)
    }

    /// The bytes of type `id`, members at their offsets.
    fn size_of(&self, id: u32) -> Result<u32, String> {
        match self.types.get(&id) {
            Some(Type::Scalar(bytes)) => Ok(*bytes),
            Some(Type::Vector(c, n)) => Ok(self.size_of(*c)? * n),
            Some(Type::Array(e, len)) => {
                let n = self
                    .constants
                    .get(len)
                    .ok_or("array length is not a plain constant")?;
                Ok(self.size_of(*e)? * n)
            }
            Some(Type::RuntimeArray) => Ok(0),
            Some(Type::Struct(members)) => {
                let mut end = 0;
                let mut packed = 0;
                for (i, m) in members.iter().enumerate() {
                    let size = self.size_of(*m)?;
                    let start = self
                        .member_offsets
                        .get(&(id, i as u32))
                        .copied()
                        .unwrap_or(packed);
                    packed = start + size;
                    end = end.max(packed);
                }
                Ok(end)
            }
            _ => Err(format!("type %{id} has no size")),
        }
    }

    /// The variables' needs: shared memory, storage buffers (a binding seen twice counts
    /// once), push constants.
    fn count_variables(&self, needs: &mut Needs) -> Result<(), String> {
        let mut buffers_bound: Vec<(u32, u32)> = Vec::new();
        for &(ptr, id, class) in &self.variables {
            let pointee = match self.types.get(&ptr) {
                Some(Type::Pointer(t)) => *t,
                _ => return Err(format!("variable type %{ptr} is not a pointer")),
            };
            // An array of buffers counts once per element.
            let (element, copies) = match self.types.get(&pointee) {
                Some(Type::Array(e, len)) => (*e, self.constants.get(len).copied().unwrap_or(1)),
                _ => (pointee, 1),
            };
            let is_buffer = class == CLASS_STORAGE_BUFFER
                || (class == CLASS_UNIFORM && self.buffer_blocks.contains(&element));
            // A second view of a binding already counted needs no descriptor of its own.
            if is_buffer && copies == 1 {
                if let Some(&b) = self.bindings.get(&id) {
                    if buffers_bound.contains(&b) {
                        continue;
                    }
                    buffers_bound.push(b);
                }
            }
            match class {
                CLASS_WORKGROUP => needs.shared_bytes += self.size_of(pointee)?,
                CLASS_STORAGE_BUFFER => needs.storage_buffers += copies,
                CLASS_UNIFORM if self.buffer_blocks.contains(&element) => {
                    needs.storage_buffers += copies
                }
                CLASS_PUSH_CONSTANT => needs.push_constant_bytes += self.size_of(pointee)?,
                _ => {}
            }
        }
        Ok(())
    }
}
