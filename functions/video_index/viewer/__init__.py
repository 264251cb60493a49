"""The viewer: a single web page (plain HTML, CSS and ES modules) served by the API itself
(docs/viewer.md), so the page shares the API's origin and its players may follow the media
redirects to the bucket."""
