"""Media facts and media work (docs/playback.md): what a video object is (:mod:`.probe`),
stream-copy remuxing and clip export (:mod:`.remux`), and real H.264 made on the spot
for the demo and the tests (:mod:`.synthetic`)."""
