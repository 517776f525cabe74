/usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 0 --leak-check full /tmp/gd-sanitize-build.413/leak 
