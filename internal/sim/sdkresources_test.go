package sim

import "testing"

// TestSDKAttributes: with Config.SDKAttributes every resource carries
// service.name and the 13 attributes a real SDK adds, each service's own;
// without it, service.name alone.
func TestSDKAttributes(t *testing.T) {
	for _, sdk := range []bool{false, true} {
		cfg := DefaultConfig()
		cfg.Requests, cfg.SDKAttributes = 300, sdk
		res, err := Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		want := 1
		if sdk {
			want = 14
		}
		instance := map[string]string{}
		var resources, spans, spanAttrs int
		for _, td := range res.Traces {
			rss := td.ResourceSpans()
			for i := range rss.Len() {
				resources++
				sss := rss.At(i).ScopeSpans()
				for j := range sss.Len() {
					for k := range sss.At(j).Spans().Len() {
						spans++
						spanAttrs += sss.At(j).Spans().At(k).Attributes().Len()
					}
				}
				attrs := rss.At(i).Resource().Attributes()
				if attrs.Len() != want {
					t.Fatalf("sdk %v: a resource has %d attributes, want %d: %v", sdk, attrs.Len(), want, attrs.AsRaw())
				}
				svc, _ := attrs.Get("service.name")
				if id, ok := attrs.Get("service.instance.id"); ok {
					if prev, seen := instance[svc.AsString()]; seen && prev != id.AsString() {
						t.Errorf("%s: instance %s and %s", svc.AsString(), prev, id.AsString())
					}
					instance[svc.AsString()] = id.AsString()
				}
			}
		}
		t.Logf("sdk %v: %.1f attributes per span, %d per resource, %.1f spans per resource", sdk,
			float64(spanAttrs)/float64(spans), want, float64(spans)/float64(resources))
		if sdk && len(instance) < 2 {
			t.Errorf("instances %v: want one per service, several services", instance)
		}
	}
}
