{
  "targets": [
    {
      "target_name": "triangulation",
      "sources": ["src/triangulation.cc"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NAPI_DISABLE_CPP_EXCEPTIONS"],
      "cflags_cc": ["-O3", "-std=c++17", "-fno-math-errno"],
      "cflags_cc!": ["-fno-exceptions"]
    }
  ]
}
