# CC_SANITIZE=address,undefined instruments every target, tests and benchmarks alike.
if(CC_SANITIZE)
  add_compile_options(-fsanitize=${CC_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${CC_SANITIZE})
endif()
