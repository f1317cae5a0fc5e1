//! The edge image's PNG image data deflated on the device (`cuda/deflate.cu`) and brought back as one zlib stream:
//! for a batch slot's edges already on the device, and for the single-image command's edges on the host.

use cudarc::driver::CudaSlice;

use super::patterns::deflate::{self, Deflate};
use super::patterns::Dims;
use super::{Gpu, GpuError};

/// The PNG image data of the edge image in `edges` (device memory, `scratch.dims()` in size) as one zlib
/// stream, deflated on the device (`cuda/deflate.cu`) and downloaded through `host` (pinned memory for the
/// copy's speed, or any buffer); `None` when the stream would be larger than `host` (data that does not
/// compress). Waits for the stream.
///
/// One synchronisation: the kernels that plan and write the blocks, then the copies back of the blocks' lengths,
/// their checksum sums and as much of the stream as `host` holds, are all queued before the host waits; whether
/// the stream fits is decided after. (Deciding first — waiting for the lengths, then writing — held a batch slot
/// ~17 ms an image with 16 slots busy, though the kernels alone deflate 2700 such images a second, H100.) The stream is written in full whether or not it fits (its buffer has room for the
/// longest), and `host.len()` bytes of it come back: for the test scene 2 MB instead of 0.1 MB, 40 µs over PCIe.
pub(crate) fn deflate_on_device(
    gpu: &Gpu,
    edges: &CudaSlice<u8>,
    scratch: &mut deflate::Scratch,
    host: &mut [u8],
) -> Result<Option<Vec<u8>>, GpuError> {
    let kernels: &Deflate = gpu.kernels.deflate()?;
    let d = scratch.dims();
    kernels.plan(&gpu.stream, edges, scratch)?;
    kernels.write(&gpu.stream, scratch)?;
    gpu.stream.memcpy_dtoh(&scratch.bits, &mut scratch.host_bits)?;
    gpu.stream.memcpy_dtoh(&scratch.adler, &mut scratch.host_adler)?;
    let room = host.len().min(4 * scratch.stream.len());
    {
        let (words, _record) = cudarc::driver::DevicePtr::device_ptr(&scratch.stream, &gpu.stream);
        // SAFETY: the stream buffer holds at least `room` bytes; `host` is borrowed mutably here, untouched until
        // the synchronisation just below.
        unsafe { cudarc::driver::result::memcpy_dtoh_async(&mut host[..room], words, gpu.stream.cu_stream()) }?;
    }
    gpu.stream.synchronize()?;
    let bytes = scratch.host_bits.as_slice()?.iter().sum::<u64>().div_ceil(8) as usize;
    if bytes > room {
        return Ok(None);
    }
    let rows = scratch.rows_per_segment();
    let lengths = (0..scratch.segments()).map(|s| (d.height as usize - s * rows).min(rows) * (d.width as usize + 1));
    let adler = deflate::adler32(scratch.host_adler.as_slice()?, lengths);
    // zlib's header: deflate with a 32 kB window, no dictionary (0x78 0x01, a multiple of 31).
    let mut zlib = Vec::with_capacity(bytes + 6);
    zlib.extend_from_slice(&[0x78, 0x01]);
    zlib.extend_from_slice(&host[..bytes]);
    zlib.extend_from_slice(&adler.to_be_bytes());
    Ok(Some(zlib))
}

/// The PNG image data of the `width × height` edge image `edges` (host bytes) deflated on the GPU, as
/// `deflate_on_device`: uploaded, deflated, the stream downloaded. For the single-image command, whose
/// edges are already on the host.
pub fn deflate_host_edges(gpu: &Gpu, edges: &[u8], width: u32, height: u32) -> Result<Option<Vec<u8>>, GpuError> {
    let d = Dims::new(width, height)?;
    assert_eq!(edges.len(), d.pixels(), "width × height edge bytes");
    let device = gpu.stream.clone_htod(edges)?;
    let mut scratch = deflate::Scratch::alloc(&gpu.stream, d)?;
    let mut host = vec![0u8; edges.len()];
    deflate_on_device(gpu, &device, &mut scratch, &mut host)
}
