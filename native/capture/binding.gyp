{
  "targets": [
    {
      "target_name": "capture",
      "sources": ["src/capture.cc"],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")",
        "../common",
        "<!@(pkg-config --cflags-only-I opencv4 | sed s/-I//g)",
        "<!@(pkg-config --cflags-only-I libavformat libavcodec libavutil | sed s/-I//g)"
      ],
      "libraries": [
        "-lopencv_core", "-lopencv_imgproc", "-lopencv_imgcodecs", "-lopencv_videoio",
        "<!@(pkg-config --libs libavformat libavcodec libavutil)",
        "-lpthread"
      ],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS"],
      "cflags_cc": ["-O2", "-std=c++17", "-fexceptions", "-pthread"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti"]
    }
  ]
}
