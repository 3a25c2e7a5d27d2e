# The layers of DESIGN.md §2, and the check that holds every library and
# program to them: `cmake --build` runs cmake/check_layering.cmake over the
# include lines of every source and header, and fails on
#   - an include of a library the target does not declare in its DEPS,
#   - an include that runs the wrong way (a lower layer using a higher one,
#     or a same-layer neighbour the data flow does not name below),
#   - a tool reaching into the controller's classes,
#   - gRPC or RocksDB headers (or gRPC in the link closure) of a pure core.
# ctest's layering_check_refuses_* tests plant wrong-way includes and expect
# the check to fail on them.

# Lowest first. Programs (geodesic_binary) are layer 5: they may use anything
# they declare, except what the forbidden edges below say.
set(GEODESIC_LAYER_0 geodesic_proto geodesic_daemon geodesic_text geodesic_entity geodesic_files)
set(GEODESIC_LAYER_1 geodesic_state geodesic_store_backup geodesic_tls geodesic_config geodesic_config_shared_keys
    geodesic_topology geodesic_fabric geodesic_local_events geodesic_bgp_codec geodesic_metrics geodesic_site_plan)
set(GEODESIC_LAYER_2 geodesic_solver geodesic_health geodesic_model geodesic_routerd_core geodesic_tenant_view)
set(GEODESIC_LAYER_3 geodesic_proto_grpc geodesic_pathcomp_service geodesic_pathcomp_console geodesic_replication geodesic_offline_store
    geodesic_site_agent geodesic_routerd_bgp geodesic_routerd)
set(GEODESIC_LAYER_4 geodesic_cli geodesic_process geodesic_lab geodesic_netns geodesic_netns_router geodesic_netns_route_monitor geodesic_netns_lab geodesic_netns_traffic geodesic_netns_drill geodesic_drill geodesic_live_drill geodesic_traffic
    geodesic_test_dirs geodesic_test_support geodesic_metrics_testing geodesic_netns_testing geodesic_bench_support)
# daemon/'s second library, the build's version (only the programs link it).
list(APPEND GEODESIC_LAYER_0 geodesic_version)

# Same-layer uses the data flow allows ("user>used").
set(GEODESIC_SAME_LAYER_EDGES
  # layer 0: the names of link states are the wire's enums; the admin
  # listener writes its address file crash-safely
  geodesic_entity>geodesic_proto geodesic_daemon>geodesic_files
  # layer 1: config keys name TLS files; topology files are config files
  geodesic_config_shared_keys>geodesic_config geodesic_config_shared_keys>geodesic_tls
  geodesic_topology>geodesic_config
  # layer 1: a backup is of the store
  geodesic_store_backup>geodesic_state
  # layer 2: the model keeps the solver's view of it (Snapshot); the solver
  # checks protected classes with the repair routerd really does (local_repair.h)
  geodesic_solver>geodesic_routerd_core
  geodesic_model>geodesic_solver
  # layer 3: the shells call each other's gRPC services and the BGP speaker
  geodesic_pathcomp_service>geodesic_proto_grpc geodesic_pathcomp_service>geodesic_replication
  # layer 3: the web console is a shell over the service's model, planner and events
  geodesic_pathcomp_console>geodesic_pathcomp_service
  geodesic_replication>geodesic_proto_grpc geodesic_offline_store>geodesic_proto_grpc
  geodesic_site_agent>geodesic_proto_grpc
  geodesic_routerd>geodesic_proto_grpc geodesic_routerd>geodesic_routerd_bgp
  # layer 4: tectl runs drills; drills run labs; labs (and the netns backbone) run processes; a netns
  # router runs FRR in the backbone's namespaces, netns traffic geodesic-traffic; tests support labs
  geodesic_cli>geodesic_drill geodesic_cli>geodesic_live_drill geodesic_cli>geodesic_netns_drill geodesic_cli>geodesic_netns
  geodesic_netns_drill>geodesic_live_drill geodesic_netns_drill>geodesic_drill geodesic_netns_drill>geodesic_lab
  geodesic_netns_drill>geodesic_netns_lab geodesic_netns_drill>geodesic_netns_traffic
  geodesic_netns_drill>geodesic_netns_route_monitor geodesic_netns_drill>geodesic_netns
  geodesic_netns_drill>geodesic_netns_router geodesic_netns_drill>geodesic_process
  geodesic_live_drill>geodesic_drill geodesic_live_drill>geodesic_lab
  geodesic_lab>geodesic_process geodesic_netns>geodesic_process
  geodesic_netns_router>geodesic_netns geodesic_netns_router>geodesic_process 
  geodesic_netns_route_monitor>geodesic_netns geodesic_netns_route_monitor>geodesic_process
  geodesic_netns_lab>geodesic_lab geodesic_netns_lab>geodesic_netns geodesic_netns_lab>geodesic_netns_router
  geodesic_netns_traffic>geodesic_netns geodesic_netns_traffic>geodesic_process
  geodesic_netns_lab>geodesic_process geodesic_test_support>geodesic_lab geodesic_test_support>geodesic_process
  geodesic_test_support>geodesic_test_dirs geodesic_metrics_testing>geodesic_process geodesic_netns_testing>geodesic_netns)

# Uses no layer may make: tectl and the drills reach a controller only over
# its API or through the store's own read/import API (geodesic_offline_store).
set(GEODESIC_FORBIDDEN_EDGES
  geodesic_cli>geodesic_pathcomp_service geodesic_cli>geodesic_pathcomp_console geodesic_cli>geodesic_replication geodesic_cli>geodesic_model
  geodesic_drill>geodesic_pathcomp_service geodesic_drill>geodesic_replication
  geodesic_live_drill>geodesic_pathcomp_service geodesic_lab>geodesic_pathcomp_service
  tectl>geodesic_pathcomp_service tectl>geodesic_model)

# Pure cores: no gRPC, no RocksDB, in their includes or in what they link.
set(GEODESIC_PURE_CORES geodesic_solver geodesic_health geodesic_model geodesic_routerd_core geodesic_bgp_codec)
# External headers only these may include (prefix=targets).
set(GEODESIC_EXTERNAL_HEADER_RULES
  "grpcpp/=LAYER3+ geodesic_tls"
  "grpc/=LAYER3+ geodesic_tls"
  "rocksdb/=geodesic_state bench_store")

# Writes the manifest of every recorded target and adds the check to `all`.
function(geodesic_layering_check)
  set(manifest ${PROJECT_BINARY_DIR}/layering_manifest.cmake)
  set(content "# Generated by cmake/layering.cmake at configure time.\n")
  string(APPEND content "set(SOURCE_DIR \"${PROJECT_SOURCE_DIR}\")\n")
  get_property(targets GLOBAL PROPERTY GEODESIC_TARGETS)
  string(APPEND content "set(TARGETS \"${targets}\")\n")
  set(all_sources)
  foreach(target ${targets})
    get_property(srcs GLOBAL PROPERTY GEODESIC_SRCS_${target})
    get_property(deps GLOBAL PROPERTY GEODESIC_DEPS_${target})
    set(layer 5)
    foreach(n 0 1 2 3 4)
      if(target IN_LIST GEODESIC_LAYER_${n})
        set(layer ${n})
      endif()
    endforeach()
    get_target_property(type ${target} TYPE)
    if(NOT type STREQUAL "EXECUTABLE" AND layer EQUAL 5)
      message(FATAL_ERROR "layering: library ${target} has no layer in cmake/layering.cmake")
    endif()
    string(APPEND content "set(SRCS_${target} \"${srcs}\")\nset(DEPS_${target} \"${deps}\")\nset(LAYER_${target} ${layer})\n")
    list(APPEND all_sources ${srcs})
  endforeach()
  # Libraries made without geodesic_library (the generated protos) have their layer too.
  foreach(n 0 1 2 3 4)
    foreach(library ${GEODESIC_LAYER_${n}})
      if(NOT library IN_LIST targets)
        string(APPEND content "set(LAYER_${library} ${n})\n")
      endif()
    endforeach()
  endforeach()
  foreach(var GEODESIC_SAME_LAYER_EDGES GEODESIC_FORBIDDEN_EDGES GEODESIC_PURE_CORES
              GEODESIC_EXTERNAL_HEADER_RULES)
    string(APPEND content "set(${var} \"${${var}}\")\n")
  endforeach()
  file(GENERATE OUTPUT ${manifest} CONTENT "${content}")
  file(GLOB_RECURSE headers CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/*.h)
  list(FILTER headers EXCLUDE REGEX "^${PROJECT_SOURCE_DIR}/(build[^/]*|\\.git)/")
  set(stamp ${PROJECT_BINARY_DIR}/layering_check.stamp)
  add_custom_command(OUTPUT ${stamp}
    COMMAND ${CMAKE_COMMAND} -DMANIFEST=${manifest} -P ${PROJECT_SOURCE_DIR}/cmake/check_layering.cmake
    COMMAND ${CMAKE_COMMAND} -E touch ${stamp}
    DEPENDS ${all_sources} ${headers} ${manifest} ${PROJECT_SOURCE_DIR}/cmake/check_layering.cmake
    COMMENT "Checking the layering of includes (cmake/layering.cmake)"
    VERBATIM)
  add_custom_target(layering_check ALL DEPENDS ${stamp})
endfunction()
