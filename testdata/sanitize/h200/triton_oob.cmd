/usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 0 python3 /work/main/validation/sanitize/triton_oob.py 
