// Throwaway measurement: inflate the scene's IDAT stream N threads at once — into a whole-image buffer (fdeflate,
// libdeflate) or through a 1 MiB ring that keeps deflate's 32 KiB window (fdeflate) — and memset bandwidth.
use std::time::Instant;
fn main(){
 let threads: usize = std::env::args().nth(1).map(|a| a.parse().unwrap()).unwrap_or(1);
 let b=std::fs::read("imgs_in/2048x1024.png").unwrap();
 let mut p=8; let mut idat=vec![];
 while p<b.len(){ let n=u32::from_be_bytes(b[p..p+4].try_into().unwrap()) as usize; if &b[p+4..p+8]==b"IDAT"{idat.extend_from_slice(&b[p+8..p+8+n]);} p+=12+n;}
 let out_len=1024*(2048*3+1);
 let n=30;
 for name in ["fdeflate","libdeflate","fdeflate-ring","memset64M"] {
   let t=Instant::now();
   std::thread::scope(|s| for _ in 0..threads { s.spawn(|| {
     let mut out=vec![1u8;out_len]; let mut ring=vec![1u8;1<<20]; let mut big=vec![1u8;64<<20];
     for k in 0..n {
     match name {
      "fdeflate" => { let mut d=fdeflate::Decompressor::new(); let (_,k)=d.read(&idat,&mut out,0,true).unwrap(); assert_eq!(k,out_len);} 
      "libdeflate" => { let mut d=libdeflater::Decompressor::new(); let k=d.zlib_decompress(&idat,&mut out).unwrap(); assert_eq!(k,out_len);}
      "fdeflate-ring" => {
        let mut d=fdeflate::Decompressor::new(); let (mut inp, mut pos, mut total)=(0usize, 0usize, 0usize);
        while !d.is_done() {
          let (used, got) = d.read(&idat[inp..], &mut ring, pos, true).unwrap();
          inp+=used; pos+=got; total+=got;
          if pos > ring.len() - (64<<10) { ring.copy_within(pos-32768..pos, 0); pos=32768; }
          if used==0 && got==0 { break; }
        }
        assert_eq!(total,out_len);
      }
      _ => { big.fill(k as u8); std::hint::black_box(&big); }
     }}}); });
   let per=t.elapsed().as_secs_f64()*1e3/n as f64;
   if name=="memset64M" { println!("{name}, {threads} threads: {:.1} GB/s", threads as f64*64.0*1.048576/per); }
   else { println!("{name}, {threads} threads: {per:.2} ms an image a thread, {:.0} images/s", threads as f64*1e3/per); }
 }
}
