# -DTRNSIM_SANITIZE=address,undefined enables sanitizers for every target.
set(TRNSIM_SANITIZE "" CACHE STRING "Comma-separated sanitizers (address,undefined,thread)")
if(TRNSIM_SANITIZE)
  add_compile_options(-fsanitize=${TRNSIM_SANITIZE} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${TRNSIM_SANITIZE})
endif()
