# Cross build for Windows x86-64 with Debian's mingw-w64 (the POSIX thread
# model: std::thread and std::mutex need it). Used by scripts/windows-check:
#   cmake -S . -B build-win -G Ninja -DWITH_QT=OFF -DWITH_CUDA=OFF \
#         -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/mingw-w64-x86_64.cmake
# The executables link the GCC runtime and winpthreads statically, so that
# they run from any folder (an install, a zip) without the mingw DLLs; with
# Wine installed, ctest runs the tests through it.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR AMD64)

set(_pi_mingw x86_64-w64-mingw32)
find_program(CMAKE_C_COMPILER NAMES ${_pi_mingw}-gcc-posix ${_pi_mingw}-gcc REQUIRED)
find_program(CMAKE_CXX_COMPILER NAMES ${_pi_mingw}-g++-posix ${_pi_mingw}-g++ REQUIRED)
find_program(CMAKE_RC_COMPILER NAMES ${_pi_mingw}-windres windres)
set(CMAKE_FIND_ROOT_PATH /usr/${_pi_mingw})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Windows 10 APIs (and the UTF-8 console they bring).
add_compile_definitions(_WIN32_WINNT=0x0A00 WINVER=0x0A00)
# The x64 ABI aligns the stack to 16 bytes only, and GCC does not realign it
# for the 32- and 64-byte AVX spills it emits with aligned moves (GCC bug
# 54412: a crash on the first misaligned spill). The assembler writes every
# aligned vector move as an unaligned one, which behaves the same on aligned
# data (the arithmetic is untouched).
add_compile_options(-Wa,-muse-unaligned-vector-move)
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")

find_program(_pi_wine NAMES wine wine64)
if(_pi_wine)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${_pi_wine})
endif()
