/usr/local/cuda/bin/compute-sanitizer --tool memcheck /tmp/gd-sanitize-build.413/many_reports 
