"""One adapter per AWS service, errors mapped once: :mod:`.store` (the read model in
DynamoDB, on :mod:`.dynamodb`'s plumbing), :mod:`.objects` (S3), :mod:`.clients`."""
