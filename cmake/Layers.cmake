# The layers of dflc (docs/design.md): support <- model <- frontend, scheduler
# <- driver <- lsp, tools. Headers are included by folder ("model/Network.h").
# Each library's include root holds a link to its own folder and nothing else,
# so a target sees a layer's headers only if it links that layer: a wrong-way
# include ("frontend/Ast.h" from scheduler/) fails to build.

# dflc_layer(TARGET FOLDER): TARGET is the library of FOLDER, which may be a
# subfolder ("scheduler/kapla": its headers are "scheduler/kapla/X.h").
function(dflc_layer target folder)
  set(root ${DFLC_INCLUDE_ROOTS}/${folder})
  get_filename_component(parent ${root}/${folder} DIRECTORY)
  file(MAKE_DIRECTORY ${parent})
  if(NOT IS_SYMLINK ${root}/${folder})
    file(CREATE_LINK ${DFLC_ROOT}/${folder} ${root}/${folder} SYMBOLIC)
  endif()
  target_include_directories(${target} PUBLIC ${root})
  target_compile_options(${target} PRIVATE ${DFLC_WARNINGS})
endfunction()

# dflc_forbid_links(TARGET FORBIDDEN...): configuration fails if TARGET links
# any of FORBIDDEN, directly or through another target.
function(dflc_forbid_links target)
  set(seen)
  set(queue ${target})
  while(queue)
    list(POP_FRONT queue t)
    if(t IN_LIST seen OR NOT TARGET ${t})
      continue()
    endif()
    list(APPEND seen ${t})
    get_target_property(libs ${t} LINK_LIBRARIES)
    get_target_property(ilibs ${t} INTERFACE_LINK_LIBRARIES)
    foreach(l IN LISTS libs ilibs)
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" l "${l}")
      if(l IN_LIST ARGN)
        message(FATAL_ERROR "${target} must not link ${l} (through ${t}): see cmake/Layers.cmake")
      endif()
      if(l AND NOT l MATCHES "-NOTFOUND$")
        list(APPEND queue ${l})
      endif()
    endforeach()
  endwhile()
endfunction()
