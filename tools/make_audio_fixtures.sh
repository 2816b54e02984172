#!/usr/bin/env bash
# Generates the small audio fixtures under tests/fixtures/audio with real encoders (sox, ffmpeg).
# Dev-only: the fixtures are committed, so tests never need these tools.
#
# Every file holds a known signal so tests can check what decoding gives back:
#   tone-*    a 1 kHz sine at -6 dBFS of the duration in the name (ms)
#   speech-*  a "speech pattern": 0.30 s silence, 0.80 s voiced burst, 0.50 s pause,
#             0.60 s voiced burst, 0.30 s silence (2.50 s, 1.40 s of "speech")
# The name says format, sample rate, channels and duration: tone-<codec>-<rate>-<ch>ch-<ms>ms.<ext>
set -euo pipefail
cd "$(dirname "$0")/../tests/fixtures/audio"

need() { command -v "$1" >/dev/null || { echo "missing $1 (apt-get install sox ffmpeg)" >&2; exit 1; }; }
need sox; need ffmpeg
ff() { ffmpeg -hide_banner -loglevel error -y "$@"; }
rm -f tone-* speech-* unsupported-*

# Raw material: 1 kHz tone at 48 kHz stereo float (channels identical), and the speech pattern.
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
tone() { # rate channels seconds out
  sox -n -r "$1" -c "$2" -b 32 -e floating-point "$4" synth "$3" sine 1000 vol 0.5
}
speech() { # rate out: bursts are a 180 Hz sawtooth with harmonics, amplitude-shaped like syllables
  sox -n -r "$1" -c 1 -b 32 -e floating-point "$tmp/b1.wav" synth 0.8 sawtooth 180 sine 700 vol 0.3 fade q 0.05 0.8 0.05
  sox -n -r "$1" -c 1 -b 32 -e floating-point "$tmp/b2.wav" synth 0.6 sawtooth 220 sine 1100 vol 0.3 fade q 0.05 0.6 0.05
  sox -n -r "$1" -c 1 -b 32 -e floating-point "$tmp/s3.wav" trim 0 0.3
  sox -n -r "$1" -c 1 -b 32 -e floating-point "$tmp/s5.wav" trim 0 0.5
  sox "$tmp/s3.wav" "$tmp/b1.wav" "$tmp/s5.wav" "$tmp/b2.wav" "$tmp/s3.wav" "$2"
}

# WAV: every PCM width, float, mono, stereo and multichannel, rates from 8 to 96 kHz.
tone 8000 1 1.0 "$tmp/t.wav";  sox "$tmp/t.wav" -b 8 -e unsigned-integer tone-pcm8-8000-1ch-1000ms.wav
tone 16000 1 1.0 "$tmp/t.wav"; sox "$tmp/t.wav" -b 16 -e signed-integer tone-pcm16-16000-1ch-1000ms.wav
tone 44100 2 0.75 "$tmp/t.wav"; sox "$tmp/t.wav" -b 16 -e signed-integer tone-pcm16-44100-2ch-750ms.wav
tone 48000 2 0.5 "$tmp/t.wav"; sox "$tmp/t.wav" -b 24 -e signed-integer tone-pcm24-48000-2ch-500ms.wav
tone 22050 1 0.6 "$tmp/t.wav"; sox "$tmp/t.wav" -b 32 -e signed-integer tone-pcm32-22050-1ch-600ms.wav
tone 48000 1 0.5 "$tmp/t.wav"; cp "$tmp/t.wav" tone-f32-48000-1ch-500ms.wav
tone 96000 1 0.25 "$tmp/t.wav"; sox "$tmp/t.wav" -b 16 -e signed-integer tone-pcm16-96000-1ch-250ms.wav
tone 16000 4 0.5 "$tmp/t.wav"; sox "$tmp/t.wav" -b 16 -e signed-integer tone-pcm16-16000-4ch-500ms.wav

# Compressed formats at two rates, mono and stereo.
tone 44100 2 1.0 "$tmp/t44s.wav"; tone 16000 1 1.0 "$tmp/t16m.wav"; tone 48000 2 1.0 "$tmp/t48s.wav"
tone 48000 1 1.0 "$tmp/t48m.wav"; tone 22050 1 1.0 "$tmp/t22m.wav"
ff -i "$tmp/t44s.wav" -c:a libmp3lame -b:a 96k tone-mp3-44100-2ch-1000ms.mp3
ff -i "$tmp/t22m.wav" -c:a libmp3lame -b:a 32k tone-mp3-22050-1ch-1000ms.mp3
ff -i "$tmp/t48s.wav" -c:a flac -sample_fmt s16 tone-flac-48000-2ch-1000ms.flac
ff -i "$tmp/t16m.wav" -c:a flac -sample_fmt s16 tone-flac-16000-1ch-1000ms.flac
ff -i "$tmp/t44s.wav" -c:a libvorbis -q:a 2 tone-vorbis-44100-2ch-1000ms.ogg
ff -i "$tmp/t16m.wav" -c:a libvorbis -q:a 2 tone-vorbis-16000-1ch-1000ms.ogg
# Ogg Opus as WhatsApp sends it (16 kHz source, mono, VoIP tuning) and a stereo 48 kHz one.
ff -i "$tmp/t16m.wav" -c:a libopus -b:a 24k -application voip tone-opus-16000-1ch-1000ms.ogg
ff -i "$tmp/t48s.wav" -c:a libopus -b:a 64k tone-opus-48000-2ch-1000ms.opus
# WebM as browsers' MediaRecorder writes it: Opus at 48 kHz, mono and stereo; WebM Vorbis; Matroska Opus.
ff -i "$tmp/t48m.wav" -c:a libopus -b:a 32k tone-opus-48000-1ch-1000ms.webm
ff -i "$tmp/t48s.wav" -c:a libopus -b:a 64k tone-opus-48000-2ch-1000ms-stereo.webm
ff -i "$tmp/t44s.wav" -c:a libvorbis -q:a 2 tone-vorbis-44100-2ch-1000ms.webm
ff -i "$tmp/t48m.wav" -c:a libopus -b:a 32k tone-opus-48000-1ch-1000ms.mka

# The speech pattern, for voice-activity detection, in the commonest upload formats.
speech 16000 "$tmp/sp.wav"; sox "$tmp/sp.wav" -b 16 -e signed-integer speech-pcm16-16000-1ch-2500ms.wav
speech 48000 "$tmp/sp48.wav"
ff -i "$tmp/sp48.wav" -c:a libopus -b:a 24k -application voip speech-opus-48000-1ch-2500ms.ogg
ff -i "$tmp/sp48.wav" -c:a libopus -b:a 32k speech-opus-48000-1ch-2500ms.webm

# Recognised but unsupported: AAC in MP4 (an iPhone voice memo).
ff -i "$tmp/t44s.wav" -c:a aac -b:a 64k unsupported-aac.m4a

ls -l
du -sh .
