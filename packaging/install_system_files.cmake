# Install-time script (install(SCRIPT) in packaging/CMakeLists.txt): the
# systemd unit leasehold.service and the example config leasehold.conf.
#   prefix /usr (the Debian package): /lib/systemd/system and /etc/leasehold
#   any other prefix:                 <prefix>/lib/systemd/system and
#                                     <prefix>/etc/leasehold
# so `cmake --install build --prefix DIR` never writes outside DIR (and
# DESTDIR is honoured by file(INSTALL)). The unit's ExecStart names the
# installed binary and config.
# Inputs (set by install(CODE)): LEASEHOLD_PACKAGING_DIR (sources),
# LEASEHOLD_PACKAGING_BINARY_DIR (scratch), LEASEHOLD_INSTALL_BINDIR.
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(leasehold_etc /etc)
  set(leasehold_unit_dir /lib/systemd/system)
else()
  set(leasehold_etc ${CMAKE_INSTALL_PREFIX}/etc)
  set(leasehold_unit_dir ${CMAKE_INSTALL_PREFIX}/lib/systemd/system)
endif()
set(LEASEHOLD_BINDIR ${CMAKE_INSTALL_PREFIX}/${LEASEHOLD_INSTALL_BINDIR})
set(LEASEHOLD_SYSCONFDIR ${leasehold_etc})
# One scratch file per destination: a cpack run and a cmake --install may overlap.
string(MD5 leasehold_dest_id "$ENV{DESTDIR}|${CMAKE_INSTALL_PREFIX}")
set(leasehold_unit_tmp ${LEASEHOLD_PACKAGING_BINARY_DIR}/unit-${leasehold_dest_id}/leasehold.service)
configure_file(${LEASEHOLD_PACKAGING_DIR}/leasehold.service.in ${leasehold_unit_tmp} @ONLY)
file(INSTALL DESTINATION ${leasehold_unit_dir} TYPE FILE PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
     FILES ${leasehold_unit_tmp})
file(INSTALL DESTINATION ${leasehold_etc}/leasehold TYPE FILE PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
     FILES ${LEASEHOLD_PACKAGING_DIR}/leasehold.conf)
get_filename_component(leasehold_unit_tmp_dir ${leasehold_unit_tmp} DIRECTORY)
file(REMOVE_RECURSE ${leasehold_unit_tmp_dir})
