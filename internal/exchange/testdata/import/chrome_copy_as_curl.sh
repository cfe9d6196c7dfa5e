curl 'https://shop.example.com/webhooks/shopify?shop=demo' \
  -H 'accept: application/json' \
  -H 'content-type: application/json' \
  -H 'x-shopify-topic: orders/create' \
  -H 'x-shopify-hmac-sha256: 2cnFB0i1pzqYVkIYM8hGjIZn4ThI6OWqqBnqVbOOX5U=' \
  -H 'x-shopify-webhook-id: b54557e4-bdd9-4b37-8a5f-bf7d70bcd043' \
  -b 'session=abc123; theme=dark' \
  --data-raw $'{"id":820982911946154508,"note":"it\'s caf\u00e9 \\\\ \\"quoted\\""}' \
  --compressed
