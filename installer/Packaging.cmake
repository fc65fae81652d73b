# Install rules for every executable and the desktop integration, and the
# CPack packages: a .deb and a .tar.gz on Linux, an NSIS installer (and .zip)
# on Windows. Included at the end of the top-level CMakeLists.txt, after all
# targets exist; executables that are not part of this build are skipped.
#
#   scripts/package        builds the Linux packages in build-package/
#   scripts/test-package   installs the .deb into a temporary root and runs it
#   .github/workflows/windows.yml   the Windows installer recipe

include(GNUInstallDirs)

set(POWERINFER_APP_ID "io.github.powerinfer.Desktop")
# target name → what it is (the file names come from OUTPUT_NAME).
set(_pi_installed_targets
  powerinfer-desktop powerinfer_cli powerinfer-server powerinfer_calibrate powerinfer_synth)

set(_pi_have_gui OFF)
foreach(_t IN LISTS _pi_installed_targets)
  if(NOT TARGET ${_t})
    continue()
  endif()
  if(_t STREQUAL "powerinfer-desktop")
    set(_pi_have_gui ON)
  endif()
  if(NOT WIN32 AND NOT APPLE)
    # Static engine libraries, Qt from the system: $ORIGIN/../lib is where
    # bundled libraries (e.g. the CUDA runtime in a tarball) would go.
    set_target_properties(${_t} PROPERTIES INSTALL_RPATH "\$ORIGIN:\$ORIGIN/../lib")
  endif()
  install(TARGETS ${_t} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endforeach()

# Desktop integration (freedesktop: menu entry, icons, AppStream metadata).
set(_pi_res ${PROJECT_SOURCE_DIR}/resources)
if(_pi_have_gui AND NOT WIN32 AND NOT APPLE)
  install(FILES ${_pi_res}/${POWERINFER_APP_ID}.desktop
          DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
  install(FILES ${_pi_res}/${POWERINFER_APP_ID}.metainfo.xml
          DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
  install(FILES ${_pi_res}/icons/powerinfer-desktop.svg
          DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps
          RENAME ${POWERINFER_APP_ID}.svg)
  foreach(_size 16 32 48 64 128 256 512)
    if(EXISTS ${_pi_res}/icons/powerinfer-desktop-${_size}.png)
      install(FILES ${_pi_res}/icons/powerinfer-desktop-${_size}.png
              DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${_size}x${_size}/apps
              RENAME ${POWERINFER_APP_ID}.png)
    endif()
  endforeach()
endif()
install(FILES ${PROJECT_SOURCE_DIR}/README.md
        DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/powerinfer-desktop)

# Windows: Qt's deployment scripts copy the Qt DLLs, plugins and the QML
# modules the UI imports next to the executables (windeployqt underneath);
# the CUDA runtime and cuBLAS DLLs are copied from the toolkit.
if(WIN32)
  if(TARGET powerinfer-desktop)
    qt_generate_deploy_qml_app_script(TARGET powerinfer-desktop
      FILENAME_VARIABLE _pi_deploy_gui NO_UNSUPPORTED_PLATFORM_ERROR)
    install(SCRIPT ${_pi_deploy_gui})
  endif()
  if(TARGET powerinfer-server)
    qt_generate_deploy_app_script(TARGET powerinfer-server
      FILENAME_VARIABLE _pi_deploy_server NO_UNSUPPORTED_PLATFORM_ERROR)
    install(SCRIPT ${_pi_deploy_server})
  endif()
  if(POWERINFER_HAVE_CUDA)
    file(GLOB _pi_cuda_dlls "${CUDAToolkit_BIN_DIR}/cudart64_*.dll"
         "${CUDAToolkit_BIN_DIR}/cublas64_*.dll" "${CUDAToolkit_BIN_DIR}/cublasLt64_*.dll"
         "${CUDAToolkit_BIN_DIR}/x64/cudart64_*.dll" "${CUDAToolkit_BIN_DIR}/x64/cublas64_*.dll"
         "${CUDAToolkit_BIN_DIR}/x64/cublasLt64_*.dll")
    if(NOT _pi_cuda_dlls)
      message(WARNING "CUDA runtime/cuBLAS DLLs not found in ${CUDAToolkit_BIN_DIR}: "
                      "the installer will need them on PATH")
    endif()
    install(FILES ${_pi_cuda_dlls} DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endif()

# ---- CPack -----------------------------------------------------------------
set(CPACK_PACKAGE_NAME "powerinfer-desktop")
set(CPACK_PACKAGE_VENDOR "PowerInfer Desktop contributors")
set(CPACK_PACKAGE_CONTACT "PowerInfer Desktop contributors <maintainers@powerinfer.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_HOMEPAGE_URL "https://github.com/powerinfer/powerinfer-desktop")
set(CPACK_PACKAGE_INSTALL_DIRECTORY "PowerInfer Desktop")
set(CPACK_RESOURCE_FILE_README "${PROJECT_SOURCE_DIR}/README.md")
set(CPACK_STRIP_FILES ON)
if(NOT CPACK_PACKAGE_DIRECTORY)
  set(CPACK_PACKAGE_DIRECTORY "${PROJECT_BINARY_DIR}/packages")
endif()
if(_pi_have_gui)
  set(CPACK_PACKAGE_EXECUTABLES "powerinfer-desktop;PowerInfer Desktop")
endif()

if(WIN32)
  set(CPACK_GENERATOR "NSIS;ZIP")
else()
  set(CPACK_GENERATOR "DEB;TGZ")
endif()

# .deb: library dependencies come from dpkg-shlibdeps; what Qt loads at run
# time (QML modules, plugins) is invisible to it and is listed here.
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "utils")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(_pi_deb_depends "")
if(_pi_have_gui)
  # Import → package, for the imports of ui/*.qml and what those modules load
  # (Controls.Basic uses Templates; the non-native dialogs use
  # Qt.labs.folderlistmodel and QtQuick.Shapes; QtQuick loads WorkerScript).
  set(_pi_qml_packages
    "QtQuick=qml6-module-qtquick,qml6-module-qtquick-window,qml6-module-qtqml-workerscript"
    "QtQuick.Controls=qml6-module-qtquick-controls,qml6-module-qtquick-templates"
    "QtQuick.Layouts=qml6-module-qtquick-layouts"
    "QtQuick.Window=qml6-module-qtquick-window"
    "QtQuick.Dialogs=qml6-module-qtquick-dialogs,qml6-module-qt-labs-folderlistmodel,qml6-module-qtquick-shapes,qml6-module-qtquick-layouts"
    "QtQuick.Shapes=qml6-module-qtquick-shapes"
    "QtQuick.Templates=qml6-module-qtquick-templates"
    "QtCore=qml6-module-qtcore"
    "QtCharts=qml6-module-qtcharts"
    "QtQml.Models=qml6-module-qtqml-models"
    "Qt.labs.platform=qml6-module-qt-labs-platform"
    "Qt.labs.settings=qml6-module-qt-labs-settings"
    "Qt.labs.qmlmodels=qml6-module-qt-labs-qmlmodels")
  file(GLOB_RECURSE _pi_qml_files ${PROJECT_SOURCE_DIR}/ui/*.qml)
  set(_pi_imports "")
  foreach(_f IN LISTS _pi_qml_files)
    if(_f MATCHES "/tests/")
      continue()
    endif()
    file(STRINGS ${_f} _lines REGEX "^[ \t]*import[ \t]+[A-Za-z]")
    foreach(_l IN LISTS _lines)
      string(REGEX REPLACE "^[ \t]*import[ \t]+([A-Za-z][A-Za-z0-9_.]*).*" "\\1" _mod "${_l}")
      list(APPEND _pi_imports ${_mod})
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES _pi_imports)
  foreach(_mod IN LISTS _pi_imports)
    if(_mod MATCHES "^PowerInfer")
      continue()  # our own module, compiled into the executable
    endif()
    set(_found OFF)
    foreach(_entry IN LISTS _pi_qml_packages)
      string(REPLACE "=" ";" _pair "${_entry}")
      list(GET _pair 0 _prefix)
      list(GET _pair 1 _pkgs)
      if(_mod STREQUAL _prefix OR _mod MATCHES "^${_prefix}\\.")
        string(REPLACE "," ";" _pkgs "${_pkgs}")
        list(APPEND _pi_deb_depends ${_pkgs})
        set(_found ON)
      endif()
    endforeach()
    if(NOT _found)
      message(WARNING "installer/Packaging.cmake: no Debian package known for QML import "
                      "'${_mod}'; add it to _pi_qml_packages so the .deb depends on it")
    endif()
  endforeach()
  # Plugins: SQLite driver (chat store), SVG (icon), platform plugins.
  list(APPEND _pi_deb_depends libqt6sql6-sqlite libqt6svg6 qt6-qpa-plugins)
  # Replies often carry emoji: without a colour emoji font they show as boxes.
  list(APPEND _pi_deb_depends fonts-noto-color-emoji)
  # Chinese, Japanese and Korean text showed as boxes: no CJK font otherwise.
  list(APPEND _pi_deb_depends fonts-noto-cjk)
  # Remote servers' API keys live in the OS keychain.
  list(APPEND _pi_deb_depends libqt6keychain1)
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "qt6-wayland")
endif()
if(POWERINFER_HAVE_CUDA)
  # The CUDA runtime is linked statically (CMake's default) and cuBLAS is
  # loaded at run time when installed (kernels/cublas_loader.cpp; without it
  # GPU prompt processing runs token by token), so the binaries need only the
  # NVIDIA driver's libcuda, which cudart loads itself; without it the app
  # reports "no CUDA device: running on CPU". Hence a recommendation, not a
  # dependency.
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "${CPACK_DEBIAN_PACKAGE_RECOMMENDS}, libcuda1 | nvidia-driver-libs")
endif()
list(REMOVE_DUPLICATES _pi_deb_depends)
string(REPLACE ";" ", " CPACK_DEBIAN_PACKAGE_DEPENDS "${_pi_deb_depends}")

# NSIS (Windows): start-menu shortcut, optional PATH entry for the command-
# line tools, an uninstaller (NSIS always writes one) that also runs before
# an upgrade.
set(CPACK_NSIS_PACKAGE_NAME "PowerInfer Desktop")
set(CPACK_NSIS_DISPLAY_NAME "PowerInfer Desktop ${PROJECT_VERSION}")
set(CPACK_NSIS_MUI_ICON "${PROJECT_SOURCE_DIR}/installer/powerinfer-desktop.ico")
set(CPACK_NSIS_MUI_UNIICON "${PROJECT_SOURCE_DIR}/installer/powerinfer-desktop.ico")
if(_pi_have_gui)
  set(CPACK_NSIS_INSTALLED_ICON_NAME "bin\\\\powerinfer-desktop.exe")
endif()
# 64-bit programs: "C:\Program Files", not "Program Files (x86)".
set(CPACK_NSIS_INSTALL_ROOT "$PROGRAMFILES64")
# The installer's own stub (makensis's Target): a Unicode one, so that an
# install folder named in any language works. x86-unicode is in every NSIS
# 3 install; scripts/windows-check builds amd64-unicode, which Debian's
# makensis has and the 64-bit-only Wine of Debian's wine64 runs.
set(POWERINFER_NSIS_TARGET "x86-unicode" CACHE STRING
    "makensis target of the NSIS installer: x86-unicode or amd64-unicode")
set(CPACK_NSIS_DEFINES "Target ${POWERINFER_NSIS_TARGET}")
# CPack's uninstaller deletes Software\<vendor>\<package> but leaves the
# vendor's key, empty; this runs after that (the template's last hook).
# (Escaped twice: CPackConfig.cmake is read back by CPack.)
set(CPACK_NSIS_DELETE_ICONS_EXTRA
    "DeleteRegKey /ifempty SHCTX \\\"Software\\\\${CPACK_PACKAGE_VENDOR}\\\"")
set(CPACK_NSIS_ENABLE_UNINSTALL_BEFORE_INSTALL ON)
set(CPACK_NSIS_MODIFY_PATH ON)
set(CPACK_NSIS_URL_INFO_ABOUT "${CPACK_PACKAGE_HOMEPAGE_URL}")
set(CPACK_NSIS_EXECUTABLES_DIRECTORY "bin")

include(CPack)

# The install test of this build's .deb (scripts/test-package; cpack writes
# it to <build>/packages). Without one, or with one older than the build, it
# reports "skipped" (77).
if(NOT WIN32 AND NOT APPLE)
  add_test(NAME tst_package COMMAND ${PROJECT_SOURCE_DIR}/scripts/test-package --skip-if-missing)
  set_tests_properties(tst_package PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300
    ENVIRONMENT "QT_QPA_PLATFORM=offscreen;PACKAGE_BUILD_DIR=${CMAKE_BINARY_DIR}")
endif()
