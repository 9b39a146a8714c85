# find_package(leasehold-client): the older name of find_package(leasehold);
# defines the same targets (leasehold::leasehold_client, leasehold::client, ...).
include(CMakeFindDependencyMacro)
find_dependency(leasehold CONFIG PATHS "${CMAKE_CURRENT_LIST_DIR}/../leasehold" NO_DEFAULT_PATH)
