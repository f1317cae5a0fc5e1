#!/usr/bin/env python3
"""nvJPEG's decode rate alone on a folder of JPEGs (ctypes, CuPy for device memory and streams), as batch mode
calls it and the other ways nvJPEG offers: `nvjpegDecode` with a state and a stream per thread on each backend
(default, HYBRID, GPU_HYBRID) and 1–16 threads; `nvjpegDecodeBatched` on the default and GPU_HYBRID backends
and on the GPU's JPEG engine (the hardware backend) at 1–32 images a call and 1–4 threads. The engine's calls
need the CUDA context current on the calling thread (each worker thread binds it first); without that they
fail with status 5, "allocator failure" — what once looked like the engine being unusable here. Each configuration warmed up once. For the question of
what limits batch mode's JPEG rate. Needs libnvjpeg.so.13 and CuPy; images are
assumed 4000×3000 (scripts/make_photos.py).

    python3 scripts/nvjpeg_rates.py FOLDER [COUNT] [engine]

With `engine`, only the JPEG engine's batched calls (the decode-alone rate batch mode is compared with).
"""

import ctypes as C, glob, time, sys, threading, numpy as np, cupy as cp
lib = C.CDLL("libnvjpeg.so.13")
P=C.c_void_p; sz=C.c_size_t
class Img(C.Structure): _fields_=[("channel",P*4),("pitch",sz*4)]
files=sorted(glob.glob(sys.argv[1]+"/*.jpg"))[:int(sys.argv[2]) if len(sys.argv) > 2 else 200]
datas=[open(f,'rb').read() for f in files]
W, H = 4000, 3000
def handle(backend):
    h=P()
    if backend is None: r=lib.nvjpegCreateSimple(C.byref(h))
    else: r=lib.nvjpegCreateEx(C.c_int(backend),None,None,C.c_uint(0),C.byref(h))
    assert r==0,("create",backend,r); return h
def state(h):
    s=P(); r=lib.nvjpegJpegStateCreate(h,C.byref(s)); assert r==0,r; return s
def simple(nthreads, backend=None):
    h=handle(backend)
    def work(k):
        s=state(h); st=cp.cuda.Stream(non_blocking=True); out=cp.empty(W*H*3,cp.uint8)
        img=Img(); img.channel[0]=out.data.ptr; img.pitch[0]=W*3
        for i in range(k,len(datas),nthreads):
            d=datas[i]; r=lib.nvjpegDecode(h,s,d,sz(len(d)),C.c_int(5),C.byref(img),P(st.ptr)); assert r==0,r
            st.synchronize()
    return work_all(work,nthreads)
def work_all(work,n):
    errs=[]
    def guarded(k):
        try: work(k)
        except Exception as e: errs.append(repr(e))
    ts=[threading.Thread(target=guarded,args=(k,)) for k in range(n)]
    t0=time.perf_counter(); [t.start() for t in ts]; [t.join() for t in ts]
    if errs: raise RuntimeError(errs[0])
    return time.perf_counter()-t0
def hw(batch,nthreads,backend=3):
    h=handle(backend); prep=[]
    for k in range(nthreads):
        s=state(h); st=cp.cuda.Stream(non_blocking=True)
        r=lib.nvjpegDecodeBatchedInitialize(h,s,C.c_int(batch),C.c_int(1),C.c_int(5)); assert r==0,("init",r)
        outs=[cp.empty(W*H*3,cp.uint8) for _ in range(batch)]
        imgs=(Img*batch)()
        for j in range(batch): imgs[j].channel[0]=outs[j].data.ptr; imgs[j].pitch[0]=W*3
        prep.append((s,st,outs,imgs))
    def work(k):
        cp.cuda.runtime.setDevice(0)  # the context current on this thread: the engine needs it
        s,st,outs,imgs=prep[k]
        mine=list(range(k,len(datas),nthreads))
        for b0 in range(0,len(mine)-batch+1,batch):
            ds=[datas[i] for i in mine[b0:b0+batch]]
            ptrs=(C.c_char_p*batch)(*ds); lens=(sz*batch)(*[len(d) for d in ds])
            r=lib.nvjpegDecodeBatched(h,s,ptrs,lens,imgs,P(st.ptr)); assert r==0,("dec",r)
            st.synchronize()
    return work
engine_only = sys.argv[3:4] == ["engine"]
for be in [] if engine_only else [None,1,2]:
    for n in [1,4,8,16]:
        try:
            simple(n,be); t=simple(n,be); print(f"simple backend {be} x{n}: {len(datas)/t:.0f} img/s",flush=True)
        except Exception as e: print("simple",be,n,"failed",e,flush=True)
for be in [3] if engine_only else [0,2,3]:
  for batch,n in [(1,1),(1,4),(2,4),(4,4),(8,1),(16,1),(8,2),(16,2),(32,1)]:
    try:
        w=hw(batch,n,be); work_all(w,n); t=work_all(w,n)
        print(f"batched backend {be} batch {batch} x{n} threads: {len(datas)/t:.0f} img/s",flush=True)
    except Exception as e: print("batched",be,batch,n,"failed",e,flush=True)
