/usr/local/cuda/bin/compute-sanitizer --tool racecheck --racecheck-report hazard --print-limit 0 /tmp/gd-sanitize-build.413/missing_sync 
