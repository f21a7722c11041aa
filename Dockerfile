# Builds the krtt operator image. Not used by the tests.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/krtt-operator ./cmd/krtt-operator \
 && CGO_ENABLED=0 go build -trimpath -o /out/krtt ./cmd/krtt

FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/krtt-operator /out/krtt /usr/local/bin/
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/krtt-operator"]
