# Install layout and the Debian package (CPack).
#
#   bin/cairnd, bin/cairn, bin/cairn-train
#   lib/cairn/libcairn_train_cuda.so          cairn-train's CUDA backend (dlopen'ed)
#   lib/cairn/python/cairn/                   the Python SDK, stubs included: what
#                                             cairnd gives jobs (jobs/python_sdk.h)
#   lib/python3/dist-packages/cairn.pth       puts it on Debian's python3 path
#                                             (a relative .pth line: ../../cairn/python)
#   lib/systemd/system/cairnd.service         runs cairnd as user cairn, data in /var/lib/cairn
#   share/cairn/grafana/cairn.json (+ provisioning/)   the Grafana dashboard
#   share/cairn/prometheus/prometheus.yml, alerts.yml  scrape config and alert rules
#   share/cairn/prometheus/targets/cairnd.yml  its scrape targets (file-based discovery)
#   share/cairn/examples/                     study configs and training programs
#   share/doc/cairn/README.md, share/doc/cairn/docs/   the front door and its pages
# Shipped configs go under share/ (like Debian's prometheus exporters ship
# their examples), so an admin copies them into /etc/prometheus or Grafana's
# provisioning and no conffile prompts appear on upgrade.
include(GNUInstallDirs)

# Install and package what is built (`cmake --build build` first, as for
# `cmake --install`): without this, cpack's preinstall step runs a serial
# `make all` over the whole tree before packaging, a full rebuild whenever
# anything is stale (that is what pushed packaging_deb_test past 600 s).
# A binary that was never built still fails the install, naming it.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

# The CUDA runtime and cuBLAS come from NVIDIA's toolkit in /usr/local/cuda,
# not from a Debian package: installed binaries find them there.
set(CMAKE_INSTALL_RPATH "/usr/local/cuda/lib64")

install(TARGETS cairnd cairn cairn-train RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# cairn-train finds its CUDA module at <bindir>/../lib/cairn/ (cuda_loader.h),
# so the path is fixed rather than ${CMAKE_INSTALL_LIBDIR}.
if(TARGET cairn_train_cuda)
  install(TARGETS cairn_train_cuda LIBRARY DESTINATION lib/cairn)
endif()
install(DIRECTORY ${PROJECT_BINARY_DIR}/lib/cairn/python/ DESTINATION lib/cairn/python
  PATTERN __pycache__ EXCLUDE)
install(FILES packaging/cairn.pth DESTINATION lib/python3/dist-packages)
install(FILES packaging/cairnd.service DESTINATION lib/systemd/system)
install(FILES monitoring/grafana/cairn.json
  DESTINATION ${CMAKE_INSTALL_DATADIR}/cairn/grafana)
install(DIRECTORY monitoring/grafana/provisioning
  DESTINATION ${CMAKE_INSTALL_DATADIR}/cairn/grafana)
install(FILES monitoring/prometheus/prometheus.yml monitoring/prometheus/alerts.yml
  DESTINATION ${CMAKE_INSTALL_DATADIR}/cairn/prometheus)
install(FILES monitoring/prometheus/targets/cairnd.yml
  DESTINATION ${CMAKE_INSTALL_DATADIR}/cairn/prometheus/targets)
install(DIRECTORY examples/ DESTINATION ${CMAKE_INSTALL_DATADIR}/cairn/examples)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME cairn)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "Cairn developers <cairn@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "Hyperparameter-tuning and experiment-tracking service (cairnd, cairn, cairn-train)")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS /usr/local/cuda/lib64)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser, passwd")
# The web UI's charts (cairnd serves Chart.js from /usr/share/javascript);
# what the Python SDK imports, in jobs and for users.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
  "libjs-chart.js, python3, python3-grpcio, python3-protobuf, python3-yaml")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
  ${PROJECT_SOURCE_DIR}/packaging/postinst ${PROJECT_SOURCE_DIR}/packaging/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
