# Builds the krtt image: the operator (entrypoint), the krtt CLI and the
# simulated provider (config/sim runs it from the same image). Tests never
# build it. `make docker-build IMG=...` builds it.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/krtt-operator ./cmd/krtt-operator \
 && CGO_ENABLED=0 go build -trimpath -o /out/krtt ./cmd/krtt \
 && CGO_ENABLED=0 go build -trimpath -o /out/krtt-sim ./cmd/krtt-sim

FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/krtt-operator /out/krtt /out/krtt-sim /usr/local/bin/
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/krtt-operator"]
